# What each nugget encodes (NUGGET §5.3, eq. 9, Figs. 7, 8, 11 and App. C): teacher-forced decoding of
# the AE model with one nugget exposed (src/multivec/nugget/analysis/probability_gain.py).
# Documents: word windows of WikiText-2 test (no training corpus reads it; audited as `nugget_gain`).

GAIN = config["nugget_analysis"]["probability_gain"]
GAIN_RATIO = str(GAIN["ratio"])
# Its ratio one of nugget_analysis.ratios, one document count per length, fig7_length one of the lengths:
# checked with the config (multivec.config.cross_checks).
GAIN_DOCUMENTS = "data/built/nugget_gain/documents.jsonl"  # GAIN_FILE (rules/common.smk): gains per seed and length
AUDIT_TASKS["nugget_gain"] = {"format": "text_jsonl", "files": [GAIN_DOCUMENTS]}

from multivec.nugget.analysis.gain_bins import DISTANCE_BINS as _DISTANCE_BINS

register_stat_table("nugget_fig7_8", "nugget", rows=[f"len{length}" for length in GAIN["lengths"]],
                    metrics=list(_DISTANCE_BINS))
# A model whose decoder memory carries each slot's position (the demo AE): the same table with each nugget
# exposed by its vector alone, so that the position channel's part of the gain is measured, not assumed.
GAIN_VECTORS_ONLY = bool(NUGGET_ZOO.nugget_model_config("ae", GAIN["ratio"]).get("decoder_memory_positions"))
if GAIN_VECTORS_ONLY:
    register_stat_table("nugget_fig7_8_vectors_only", "nugget",
                        rows=[f"len{length}" for length in GAIN["lengths"]], metrics=list(_DISTANCE_BINS))
GAIN_EXPOSURES = {"nugget_fig7_8": (GAIN_FILE, "each nugget exposed as the decoder reads it in training"),
                  **({"nugget_fig7_8_vectors_only": (GAIN_FILE_VECTORS_ONLY, "each nugget exposed by its vector "
                                                     "alone, without the decoder's position term")}
                     if GAIN_VECTORS_ONLY else {})}


rule nugget_gain_documents:
    input:
        text=raw("wikitext2", "test.txt"),
    output:
        documents=GAIN_DOCUMENTS,
    params:
        lengths=GAIN["lengths"],
        documents=GAIN["documents"],
        encoder=config["nugget"]["encoder"],  # its unknown token replaces <unk>
        seed=config["seed"],
    log:
        "logs/nugget_gain/documents.log",
    benchmark:
        "benchmarks/rules/nugget_gain/documents.tsv"
    threads: 1
    resources:
        **family_resources("build"),
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/nugget_gain_documents.py"


rule nugget_gain_compute:
    input:
        weights=long_model_files("ae", GAIN_RATIO, "{seed}")["weights"],
        config=long_model_files("ae", GAIN_RATIO, "{seed}")["config"],
        documents=GAIN_DOCUMENTS,
    output:
        gains=GAIN_FILE,
    params:
        memory_positions=True,
    log:
        "logs/nugget_gain/seed{seed}_len{length}.log",
    benchmark:
        "benchmarks/rules/nugget_gain/seed{seed}_len{length}.tsv"
    wildcard_constraints:
        length="[0-9]+",
        seed=SEED_PATTERN,
    threads: family_threads("train")
    resources:
        **family_resources("train", gpu=True),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/nugget_gain_compute.py"


rule nugget_fig7_probability_gain:
    input:
        gains=GAIN_FILE.format(seed=FIGURE_SEED, length=GAIN["fig7_length"]),
    output:
        csv=report("results/nugget_fig7_probability_gain.csv", caption="../workflow/report/nugget_fig7_probability_gain.rst", category="NUGGET"),
        png=report("results/nugget_fig7_probability_gain.png",
                   caption="../workflow/report/nugget_fig7_probability_gain.rst", category="NUGGET"),
    params:
        figure="nugget",
        nuggets=GAIN["fig7_nuggets"],
        columns=len(GAIN["fig7_nuggets"]),
        title=f"Fig. 7: probability gain given one nugget (AE, r = {GAIN_RATIO}, {GAIN['fig7_length']}-token documents)",
        statistics=statistics_params(),
    log:
        "logs/nugget_gain/fig7.log",
    benchmark:
        "benchmarks/rules/nugget_gain/fig7.tsv"
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_gain_figure.py"


rule nugget_fig11_probability_gain_all:
    input:
        gains=GAIN_FILE.format(seed=FIGURE_SEED, length=GAIN["fig7_length"]),
    output:
        csv=report("results/nugget_fig11_probability_gain_all.csv", caption="../workflow/report/nugget_fig11_probability_gain_all.rst", category="NUGGET"),
        png=report("results/nugget_fig11_probability_gain_all.png",
                   caption="../workflow/report/nugget_fig11_probability_gain_all.rst", category="NUGGET"),
    params:
        figure="nugget",
        nuggets=list(range(1, GAIN["fig11_nuggets"] + 1)),
        columns=4,
        title=f"Fig. 11: probability gain of the first {GAIN['fig11_nuggets']} nuggets (AE, r = {GAIN_RATIO})",
        statistics=statistics_params(),
    log:
        "logs/nugget_gain/fig11.log",
    benchmark:
        "benchmarks/rules/nugget_gain/fig11.tsv"
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_gain_figure.py"


rule nugget_fig8_probability_gain_lengths:
    input:
        gains=expand(GAIN_FILE, seed=FIGURE_SEED, length=GAIN["lengths"]),
    output:
        csv=report("results/nugget_fig8_probability_gain_lengths.csv", caption="../workflow/report/nugget_fig8_probability_gain_lengths.rst", category="NUGGET"),
        png=report("results/nugget_fig8_probability_gain_lengths.png",
                   caption="../workflow/report/nugget_fig8_probability_gain_lengths.rst", category="NUGGET"),
    params:
        figure="relative",
        title=f"Fig. 8: probability gain around the exposed nugget (AE, r = {GAIN_RATIO})",
        statistics=statistics_params(),
    log:
        "logs/nugget_gain/fig8.log",
    benchmark:
        "benchmarks/rules/nugget_gain/fig8.tsv"
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_gain_figure.py"


# Only where the AE decoder has the position term (GAIN_VECTORS_ONLY; not at paper scale, whose rehearsal covers
# every rule the paper DAG has).
if GAIN_VECTORS_ONLY:

    rule nugget_gain_compute_vectors_only:
        # Eq. 9 with each nugget's vector alone in the memory (no position term).
        input:
            weights=long_model_files("ae", GAIN_RATIO, "{seed}")["weights"],
            config=long_model_files("ae", GAIN_RATIO, "{seed}")["config"],
            documents=GAIN_DOCUMENTS,
        output:
            gains=GAIN_FILE_VECTORS_ONLY,
        params:
            memory_positions=False,
        log:
            "logs/nugget_gain/vectors_only_seed{seed}_len{length}.log",
        benchmark:
            "benchmarks/rules/nugget_gain/vectors_only_seed{seed}_len{length}.tsv"
        wildcard_constraints:
            length="[0-9]+",
            seed=SEED_PATTERN,
        threads: family_threads("train")
        resources:
            **family_resources("train", gpu=True),
        conda:
            "../envs/train.yaml"
        script:
            "../workflow/scripts/nugget_gain_compute.py"


rule units_nugget_fig7_8:
    # Per-document mean gain by distance from the exposed nugget, per length and seed (Figs. 7-8's claims); the
    # table of the exposures without the position term likewise (GAIN_EXPOSURES).
    input:
        lambda wc: [f for f, *_ in gain_files(wc.seedset, GAIN["lengths"], wc.table, GAIN_EXPOSURES[wc.table][0])],
    output:
        units_path("{table}", "{seedset}"),
    params:
        files=lambda wc: [keys for _, *keys in gain_files(wc.seedset, GAIN["lengths"], wc.table,
                                                           GAIN_EXPOSURES[wc.table][0])],
    log:
        "logs/statistics/units_{table}_{seedset}.log",
    benchmark:
        "benchmarks/rules/statistics/units_{table}_{seedset}.tsv"
    wildcard_constraints:
        seedset="tables|claims",
        table="|".join(GAIN_EXPOSURES),
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_gain_units.py"


rule nugget_fig7_8_gain_bins:
    # Figs. 7-8 as a table: mean gain per distance bin and document length, CIs over documents, claims (each
    # exposure of GAIN_EXPOSURES: results/nugget_fig7_8_gain_bins[_vectors_only]).
    input:
        units=units_path("{table}", "tables"),
        claims=claims_file(),
    output:
        csv=report("results/{table}_gain_bins.csv", caption="../workflow/report/nugget_fig7_8_gain_bins.rst",
                   category="NUGGET"),
        md=report("results/{table}_gain_bins.md", caption="../workflow/report/nugget_fig7_8_gain_bins.rst",
                  category="NUGGET"),
        tests=tests_report("results/{table}_tests.csv", "NUGGET"),
    params:
        table=lambda wc: wc.table,
        exposure=lambda wc: GAIN_EXPOSURES[wc.table][1],
        seeds=model_seeds("tables"),
        statistics=statistics_params(),
        comparisons=lambda wc: table_comparisons(wc.table),
        claims=claims_params(),
        scale=config["scale"],
        ratio=GAIN_RATIO,
    log:
        "logs/nugget_gain/{table}_gain_bins.log",
    benchmark:
        "benchmarks/rules/nugget_gain/{table}_gain_bins.tsv"
    wildcard_constraints:
        table="|".join(GAIN_EXPOSURES),
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_gain_bins.py"
