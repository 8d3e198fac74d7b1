# NUGGET §5.1-5.2 (Qin & Van Durme 2023): Fig. 4 (reconstruction BLEU vs r), Fig. 5 (which tokens
# become nuggets) and Fig. 6 (a document shaded by its scores), from the models of rules/nugget_long.smk.
# Decoding and scoring run the models: GPU resources at paper scale (`resources.encode`).

FIGS = config["nugget_analysis"]
# The ratio of Figs. 5 and 6 as the model folders spell it; it must be one of `nugget_analysis.ratios`.
FIG_RATIOS = {key: str(FIGS[key]["ratio"]) for key in ("fig5", "fig6")}
for _key, _ratio in FIG_RATIOS.items():
    if _ratio not in LONG_RATIOS:
        raise ValueError(f"config nugget_analysis.{_key}.ratio={_ratio} is not one of nugget_analysis.ratios "
                         f"{LONG_RATIOS}: no model is trained for it")
FIG5_RATIO, FIG6_RATIO = FIG_RATIOS["fig5"], FIG_RATIOS["fig6"]


rule nugget_fig4_decode:
    # Beam search from the nuggets of every dev document (§5.1), hypotheses and corpus BLEU.
    input:
        dev=lambda wc: corpus(wc.objective, "dev"),
        **long_model_files("{objective}", "{ratio}"),
    output:
        hypotheses="results/nugget_analysis/bleu/{objective}_r{ratio}.jsonl",
        bleu="results/nugget_analysis/bleu/{objective}_r{ratio}.json",
    params:
        settings=FIGS["fig4"],
    log:
        "logs/nugget_figures/fig4_{objective}_r{ratio}.log",
    benchmark:
        "benchmarks/rules/nugget_figures/fig4_{objective}_r{ratio}.tsv"
    wildcard_constraints:
        objective="ae|mt",
        ratio="[0-9.]+",
    threads: rule_resources("encode")["threads"]
    resources:
        mem_mb=rule_resources("encode")["mem_mb"],
        runtime=rule_resources("encode")["runtime"],
        gpu=rule_resources("encode").get("gpu", 0),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_fig4_decode.py"


rule nugget_fig4:
    input:
        bleu=expand("results/nugget_analysis/bleu/{objective}_r{ratio}.json", objective=LONG_OBJECTIVES,
                    ratio=LONG_RATIOS),
        # in the same (objective, ratio) order: each model's best dev loss, the right panel
        trainings=[long_model_files(o, r)["summary"] for o in LONG_OBJECTIVES for r in LONG_RATIOS],
    output:
        csv="results/nugget_fig4_bleu_vs_ratio.csv",
        md="results/nugget_fig4_bleu_vs_ratio.md",
        figure="results/nugget_fig4_bleu_vs_ratio.png",
    params:
        scale=config["scale"],
        encoder=config["nugget"]["encoder"],
    log:
        "logs/nugget_figures/fig4.log",
    benchmark:
        "benchmarks/rules/nugget_figures/fig4.tsv"
    threads: rule_resources("build")["threads"]
    resources:
        mem_mb=rule_resources("build")["mem_mb"],
        runtime=rule_resources("build")["runtime"],
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_fig4.py"


rule nugget_fig5:
    # Token types among the nuggets vs in the text (§5.2), AE and MT at r = fig5.ratio.
    input:
        dev=[corpus(objective, "dev") for objective in LONG_OBJECTIVES],
        models=[long_model_files(objective, FIG5_RATIO)["weights"] for objective in LONG_OBJECTIVES],
    output:
        csv="results/nugget_fig5_selected_tokens.csv",
        observations="results/nugget_fig5_observations.csv",
        figure="results/nugget_fig5_selected_tokens.png",
    params:
        settings=FIGS["fig5"],
        objectives=LONG_OBJECTIVES,
        scale=config["scale"],
    log:
        "logs/nugget_figures/fig5.log",
    benchmark:
        "benchmarks/rules/nugget_figures/fig5.tsv"
    threads: rule_resources("encode")["threads"]
    resources:
        mem_mb=rule_resources("encode")["mem_mb"],
        runtime=rule_resources("encode")["runtime"],
        gpu=rule_resources("encode").get("gpu", 0),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_fig5.py"


rule nugget_fig6:
    # AE dev documents with every token shaded by its score and the nuggets on green (§5.2).
    input:
        dev=corpus("ae", "dev"),
        **long_model_files("ae", FIG6_RATIO),
    output:
        html="results/nugget_fig6_highlight.html",
        figure="results/nugget_fig6_highlight.png",
        scores="results/nugget_fig6_highlight.json",
    params:
        settings=FIGS["fig6"],
        scale=config["scale"],
    log:
        "logs/nugget_figures/fig6.log",
    benchmark:
        "benchmarks/rules/nugget_figures/fig6.tsv"
    threads: rule_resources("encode")["threads"]
    resources:
        mem_mb=rule_resources("encode")["mem_mb"],
        runtime=rule_resources("encode")["runtime"],
        gpu=rule_resources("encode").get("gpu", 0),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_fig6.py"
