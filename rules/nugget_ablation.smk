# NUGGET Table 4 (§7.1): ablations of the scorer layer l, the feedback and the selector, plus a random
# selector the paper lacks; MT objective, r = 0.1, the longer training regime of `nugget_analysis`.
# Every row is a model of the zoo (rules/nugget.smk; NUGGET (l = 3) is Table 2's MT r = 0.1 model), read
# through ablation_model_dir. Each row is encoded and ranked with Table 2's evaluation, at
# each training seed; the table averages statistics.seeds.tables with CIs over queries (units_nugget_table4).
# Its token-pooling row is Table 2's token_pooling run at r = 0.1, read from Table 2's evaluation.
# Helpers: rules/nugget_ablation_common.smk.


rule sentence_final_share:
    # r_sb: the share of sentence-final source tokens of the MT training corpus (§7.1: 3.3% in the paper).
    input:
        corpus("mt", "train"),
    output:
        SENTENCE_SHARE,
    params:
        model=lambda wc: long_model_config("mt", "0.1"),  # the tokenizer and source length only (no seed)
    log:
        "logs/nugget_ablation/sentence_final_share.log",
    benchmark:
        "benchmarks/rules/nugget_ablation/sentence_final_share.tsv"
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/nugget_ablation_share.py"


rule encode_nugget_ablation:
    # Table 2's encoding; the sentence-boundary row gets each document's punkt sentence ends.
    input:
        unpack(ablation_encoding_inputs),
    output:
        directory("data/encodings/nugget_ablation/{name}/seed{seed}/{task}"),
    params:
        max_tokens=config["table2"]["max_tokens"],
        batch_size=config["table2"]["encode_batch_size"],
        bf16=config["table2"]["bf16"],
    log:
        "logs/encode/nugget_ablation/{name}/seed{seed}/{task}.log",
    benchmark:
        "benchmarks/rules/encode/nugget_ablation/{name}/seed{seed}/{task}.tsv"
    wildcard_constraints:
        task="pi|rr",
        name=ABLATION_PATTERN,
        seed=SEED_PATTERN,
    threads: family_threads("encode")
    resources:
        **family_resources("encode", gpu=True),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_ablation_encode.py"


rule evaluate_nugget_ablation:
    # Table 2's ranking (MaxSim-mean over the nuggets, eq. 10).
    input:
        docs=f"{task_dir('{task}')}/docs.txt",
        task=f"{task_dir('{task}')}/task.jsonl",
        encodings="data/encodings/nugget_ablation/{name}/seed{seed}/{task}",
    output:
        metrics="results/nugget_table4/{name}/seed{seed}/{task}.json",
        rankings="results/nugget_table4/{name}/seed{seed}/{task}.rankings.jsonl",
    params:
        row=lambda wc: {"name": wc.name, "kind": "nugget"},
        seed=lambda wc: int(wc.seed),
    log:
        "logs/evaluate/nugget_ablation/{name}/seed{seed}/{task}.log",
    benchmark:
        "benchmarks/rules/evaluate/nugget_ablation/{name}/seed{seed}/{task}.tsv"
    wildcard_constraints:
        task="pi|rr",
        name=ABLATION_PATTERN,
        seed=SEED_PATTERN,
    threads: family_threads("encode")
    resources:
        **family_resources("encode"),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/evaluate_ranking.py"


rule units_nugget_table4:
    # Per-query 100/rank of every ablation at every seed of a seed set (Table 4's CIs, tests, claims).
    input:
        lambda wc: [f for f, *_ in ablation_ranking_files(wc.seedset)],
    output:
        units_path("nugget_table4", "{seedset}"),
    params:
        files=lambda wc: [keys for _, *keys in ablation_ranking_files(wc.seedset)],
    log:
        "logs/statistics/units_nugget_table4_{seedset}.log",
    benchmark:
        "benchmarks/rules/statistics/units_nugget_table4_{seedset}.tsv"
    wildcard_constraints:
        seedset="tables|claims",
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/ranking_units.py"


rule nugget_table4:
    input:
        # descriptive columns (config, nuggets per document, steps, dev loss) from the first tables seed
        evaluations=ablation_evaluations(model_seeds("tables")[:1]),
        pooling=ablation_pooling_evaluations(),  # Table 2's token-pooling run at r = 0.1 (no seed)
        configs=[committed_input(ablation_model_files(n, model_seeds("tables")[0])["config"]) for n in ABLATION_ROWS],
        summaries=[committed_input(ablation_model_files(n, model_seeds("tables")[0])["summary"])
                   for n in ABLATION_ROWS],
        share=committed_input(SENTENCE_SHARE),
        units=units_path("nugget_table4", "tables"),
        claims=claims_file(),
    output:
        csv=report("results/nugget_table4_ablations.csv", caption="../workflow/report/nugget_table4_ablations.rst",
                   category="NUGGET"),
        md=report("results/nugget_table4_ablations.md", caption="../workflow/report/nugget_table4_ablations.rst",
                  category="NUGGET"),
        tests=tests_report("results/nugget_table4_tests.csv", "NUGGET"),
    params:
        rows=ABLATION_ROWS,
        pooling=ablation_pooling_params(),
        model_dirs={n: committed_folder(ablation_model_dir(n, model_seeds("tables")[0])) for n in ABLATION_ROWS},
        seeds=model_seeds("tables"),
        statistics=statistics_params(),
        comparisons=table_comparisons("nugget_table4"),
        claims=claims_params(),
        scale=config["scale"],
        nugget_encoder=config["nugget"]["encoder"],
        layers=ABLATION_LAYERS,
    log:
        "logs/nugget_table4.log",
    benchmark:
        "benchmarks/rules/nugget_table4.tsv"
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_ablation_table.py"
