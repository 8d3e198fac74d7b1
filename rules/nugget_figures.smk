# NUGGET §5.1-5.2 (Qin & Van Durme 2023): Fig. 4 (reconstruction BLEU vs r), Fig. 5 (which tokens
# become nuggets) and Fig. 6 (a document shaded by its scores), from the zoo's models (rules/nugget.smk).
# Decoding and scoring run the models: GPU resources at paper scale (`resources.encode`).

FIGS = config["nugget_analysis"]
# The ratio of Figs. 5 and 6 as the model folders spell it (one of `nugget_analysis.ratios`: checked with the
# config, multivec.config.cross_checks).
FIG_RATIOS = {key: str(FIGS[key]["ratio"]) for key in ("fig5", "fig6")}
FIG5_RATIO, FIG6_RATIO = FIG_RATIOS["fig5"], FIG_RATIOS["fig6"]
# The figures (PNG, HTML) show the models of the first tables seed; their statistics tables average
# statistics.seeds.tables (fig4: per-document BLEU statistics; fig5: per-document token counts).
FIGURE_SEED = model_seeds("tables")[0]

from multivec.nugget.analysis.selected_tokens import SHARE_METRICS as _SHARE_METRICS

register_stat_table("nugget_fig4", "nugget", rows=long_rows(), metrics=["BLEU"])
register_stat_table("nugget_fig5", "nugget", rows=LONG_OBJECTIVES, metrics=_SHARE_METRICS)


rule nugget_fig4_decode:
    # Beam search from the nuggets of every dev document (§5.1), hypotheses and corpus BLEU.
    input:
        unpack(figure_model_inputs),
    output:
        hypotheses="results/nugget_analysis/bleu/{objective}_r{ratio}/seed{seed}.jsonl",
        bleu="results/nugget_analysis/bleu/{objective}_r{ratio}/seed{seed}.json",
    params:
        settings=FIGS["fig4"],
    log:
        "logs/nugget_figures/fig4_{objective}_r{ratio}_seed{seed}.log",
    benchmark:
        "benchmarks/rules/nugget_figures/fig4_{objective}_r{ratio}_seed{seed}.tsv"
    wildcard_constraints:
        objective="ae|mt",
        ratio="[0-9.]+",
        seed=SEED_PATTERN,
    threads: family_threads("encode")
    resources:
        **family_resources("encode", gpu=True),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_fig4_decode.py"


rule units_nugget_fig4:
    # Per-document sacrebleu statistics of every Fig. 4 model over a seed set (corpus BLEU's CIs, claims).
    input:
        lambda wc: [f for f, *_ in fig4_hypothesis_files(wc.seedset)],
    output:
        units_path("nugget_fig4", "{seedset}"),
    params:
        files=lambda wc: [keys for _, *keys in fig4_hypothesis_files(wc.seedset)],
    log:
        "logs/statistics/units_nugget_fig4_{seedset}.log",
    benchmark:
        "benchmarks/rules/statistics/units_nugget_fig4_{seedset}.tsv"
    wildcard_constraints:
        seedset="tables|claims",
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_fig4_units.py"


rule nugget_fig4:
    input:
        # the first tables seed: vectors per document and each model's best dev loss (the right panel),
        # in the same (objective, ratio) order; BLEU itself is the seed mean of the unit file
        bleu=[f"results/nugget_analysis/bleu/{o}_r{r}/seed{FIGURE_SEED}.json" for o in LONG_OBJECTIVES for r in LONG_RATIOS],
        trainings=[committed_input(long_model_files(o, r, FIGURE_SEED)["summary"]) for o in LONG_OBJECTIVES
                   for r in LONG_RATIOS],
        units=units_path("nugget_fig4", "tables"),
        claims=claims_file(),
    output:
        csv=report("results/nugget_fig4_bleu_vs_ratio.csv", caption="../workflow/report/nugget_fig4_bleu_vs_ratio.rst",
                   category="NUGGET"),
        md=report("results/nugget_fig4_bleu_vs_ratio.md", caption="../workflow/report/nugget_fig4_bleu_vs_ratio.rst",
                  category="NUGGET"),
        figure=report("results/nugget_fig4_bleu_vs_ratio.png",
                      caption="../workflow/report/nugget_fig4_bleu_vs_ratio.rst", category="NUGGET"),
        tests=tests_report("results/nugget_fig4_tests.csv", "NUGGET"),
    params:
        seeds=model_seeds("tables"),
        statistics=statistics_params(),
        comparisons=table_comparisons("nugget_fig4"),
        claims=claims_params(),
        scale=config["scale"],
        encoder=config["nugget"]["encoder"],
    log:
        "logs/nugget_figures/fig4.log",
    benchmark:
        "benchmarks/rules/nugget_figures/fig4.tsv"
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_fig4.py"


rule nugget_fig5:
    # Token types among the nuggets vs in the text (§5.2), AE and MT at r = fig5.ratio.
    input:
        dev=[corpus(objective, "dev") for objective in LONG_OBJECTIVES],
        models=[long_model_files(objective, FIG5_RATIO, FIGURE_SEED)["weights"] for objective in LONG_OBJECTIVES],
    output:
        csv=report("results/nugget_fig5_selected_tokens.csv",
                   caption="../workflow/report/nugget_fig5_selected_tokens.rst", category="NUGGET"),
        observations=report("results/nugget_fig5_observations.csv",
                            caption="../workflow/report/nugget_fig5_observations.rst", category="NUGGET"),
        figure=report("results/nugget_fig5_selected_tokens.png",
                      caption="../workflow/report/nugget_fig5_selected_tokens.rst", category="NUGGET"),
    params:
        settings=FIGS["fig5"],
        objectives=LONG_OBJECTIVES,
        scale=config["scale"],
        statistics=statistics_params(),
    log:
        "logs/nugget_figures/fig5.log",
    benchmark:
        "benchmarks/rules/nugget_figures/fig5.tsv"
    threads: family_threads("encode")
    resources:
        **family_resources("encode", gpu=True),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_fig5.py"


rule nugget_fig5_documents:
    # Per dev document of Fig. 5: every source token's type and whether the model selected it.
    input:
        unpack(figure_model_inputs),
    output:
        "results/nugget_analysis/selected_tokens/{objective}_r{ratio}/seed{seed}.jsonl",
    params:
        settings=FIGS["fig5"],
    log:
        "logs/nugget_figures/fig5_documents_{objective}_r{ratio}_seed{seed}.log",
    benchmark:
        "benchmarks/rules/nugget_figures/fig5_documents_{objective}_r{ratio}_seed{seed}.tsv"
    wildcard_constraints:
        objective="ae|mt",
        ratio="[0-9.]+",
        seed=SEED_PATTERN,
    threads: family_threads("encode")
    resources:
        **family_resources("encode", gpu=True),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_fig5_documents.py"


rule units_nugget_fig5:
    # Per-document counts of delimiters (EOS, punctuation) and 'the' among nuggets and in the text.
    input:
        lambda wc: [f for f, *_ in fig5_document_files(wc.seedset, FIG5_RATIO)],
    output:
        units_path("nugget_fig5", "{seedset}"),
    params:
        files=lambda wc: [keys for _, *keys in fig5_document_files(wc.seedset, FIG5_RATIO)],
    log:
        "logs/statistics/units_nugget_fig5_{seedset}.log",
    benchmark:
        "benchmarks/rules/statistics/units_nugget_fig5_{seedset}.tsv"
    wildcard_constraints:
        seedset="tables|claims",
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_fig5_units.py"


rule nugget_fig5_shares:
    # §5.2 as a table: shares among the nuggets vs in the text, with CIs over documents, tests, claims.
    input:
        units=units_path("nugget_fig5", "tables"),
        claims=claims_file(),
    output:
        csv=report("results/nugget_fig5_shares.csv", caption="../workflow/report/nugget_fig5_shares.rst",
                   category="NUGGET"),
        md=report("results/nugget_fig5_shares.md", caption="../workflow/report/nugget_fig5_shares.rst",
                  category="NUGGET"),
        tests=tests_report("results/nugget_fig5_tests.csv", "NUGGET"),
    params:
        seeds=model_seeds("tables"),
        statistics=statistics_params(),
        comparisons=table_comparisons("nugget_fig5"),
        claims=claims_params(),
        scale=config["scale"],
        ratio=FIG5_RATIO,
    log:
        "logs/nugget_figures/fig5_shares.log",
    benchmark:
        "benchmarks/rules/nugget_figures/fig5_shares.tsv"
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_fig5_shares.py"


rule nugget_fig6:
    # AE dev documents with every token shaded by its score and the nuggets on green (§5.2).
    input:
        dev=corpus("ae", "dev"),
        **long_model_files("ae", FIG6_RATIO, FIGURE_SEED),
    output:
        html=report("results/nugget_fig6_highlight.html", caption="../workflow/report/nugget_fig6_highlight.rst",
                    category="NUGGET"),
        figure=report("results/nugget_fig6_highlight.png", caption="../workflow/report/nugget_fig6_highlight.rst",
                      category="NUGGET"),
        scores="results/nugget_fig6_highlight.json",
    params:
        settings=FIGS["fig6"],
        scale=config["scale"],
    log:
        "logs/nugget_figures/fig6.log",
    benchmark:
        "benchmarks/rules/nugget_figures/fig6.tsv"
    threads: family_threads("encode")
    resources:
        **family_resources("encode", gpu=True),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_fig6.py"
