# NUGGET Table 2: document paraphrase identification (PI) and passage reranking (RR),
# MRR x 100 over 20 candidates, one row per model in config table2.rows. A trained row is evaluated
# once per training seed (run `<row>/seed<seed>`), the others once (run `<row>`); the table averages
# the seeds of statistics.seeds.tables, with bootstrap CIs over queries (units_table2).


register_stat_table("table2", "nugget", rows=list(ROWS), metrics=["PI", "RR"])


rule pi_task:
    # The paper's released PI dev set, or a rebuild from ParaBank v1.0 (Appendix A).
    input:
        unpack(pi_task_inputs),
    output:
        docs=f"{task_dir('pi')}/docs.txt",
        task=f"{task_dir('pi')}/task.jsonl",
        meta=f"{task_dir('pi')}/meta.json",
    params:
        settings=config["table2"]["pi"],
        max_tokens=config["table2"]["pi"]["document_tokens"],
        seed=config["seed"],
        encoder=config["nugget"]["encoder"],  # whose tokenizer counts the unknown-token share
        checks=config["data"],
    log:
        "logs/tasks/pi.log",
    benchmark:
        "benchmarks/rules/tasks/pi.tsv"
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/pi_task.py"


rule rr_task:
    # WikiText sections: first section = query, another section of the article = answer.
    input:
        wikitext=rr_task_inputs,
    output:
        docs=f"{task_dir('rr')}/docs.txt",
        task=f"{task_dir('rr')}/task.jsonl",
        meta=f"{task_dir('rr')}/meta.json",
    params:
        settings=config["table2"]["rr"],
        seed=config["seed"],
        encoder=config["nugget"]["encoder"],  # its tokenizer's unknown token replaces WikiText's <unk>
        checks=config["data"],
    log:
        "logs/tasks/rr.log",
    benchmark:
        "benchmarks/rules/tasks/rr.tsv"
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/rr_task.py"


rule frozen_bottom_states:
    # The pretrained encoder's embeddings + layers 1..l over every document of a task, computed
    # once: every NUGGET row with a frozen bottom runs only its trained top from these states.
    input:
        docs=f"{task_dir('{task}')}/docs.txt",
        task=f"{task_dir('{task}')}/task.jsonl",
    output:
        directory(frozen_bottom_dir("{task}")),
    params:
        nugget=frozen_bottom_config(),
        max_tokens=config["table2"]["max_tokens"],  # null: the encoder's position limit
        batch_size=config["table2"]["encode_batch_size"],
    log:
        "logs/frozen_bottom/{task}.log",
    benchmark:
        "benchmarks/rules/frozen_bottom/{task}.tsv"
    wildcard_constraints:
        task="pi|rr",
    threads: family_threads("encode")
    resources:
        **family_resources("encode", gpu=True),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/frozen_bottom_states.py"


rule encode_task:
    # Every document of a task through one encoder: a trained row's model, or the base encoder.
    input:
        unpack(encoding_inputs),
    output:
        directory("data/encodings/{encoder}/{task}"),
    params:
        base_encoder=config["base_encoder"],
        max_tokens=config["table2"]["max_tokens"],  # null: each encoder's position limit
        batch_size=config["table2"]["encode_batch_size"],
        bf16=config["table2"]["bf16"],
    log:
        "logs/encode/{encoder}/{task}.log",
    benchmark:
        "benchmarks/rules/encode/{encoder}/{task}.tsv"
    wildcard_constraints:
        task="pi|rr",
        encoder=ENCODER_PATTERN,
    threads: family_threads("encode")
    resources:
        **family_resources("encode", gpu=True),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/encode_task.py"


rule evaluate_ranking:
    # Rank each query's 20 candidates: MaxSim-mean or cosine of a run's vectors, or BM25.
    input:
        unpack(evaluation_inputs),
    output:
        metrics="results/table2/{run}/{task}.json",
        rankings="results/table2/{run}/{task}.rankings.jsonl",
    params:
        row=lambda wc: ROWS[parse_run(wc.run)[0]],
        seed=lambda wc: parse_run(wc.run)[1],
    log:
        "logs/evaluate/{run}/{task}.log",
    benchmark:
        "benchmarks/rules/evaluate/{run}/{task}.tsv"
    wildcard_constraints:
        task="pi|rr",
        run=RUN_PATTERN,
    threads: family_threads("encode")
    resources:
        **family_resources("encode"),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/evaluate_ranking.py"


rule units_table2:
    # Per-query 100/rank of every run over a seed set: what Table 2's CIs, tests and claims use.
    input:
        lambda wc: [f for f, *_ in table2_ranking_files(wc.seedset)],
    output:
        units_path("table2", "{seedset}"),
    params:
        files=lambda wc: [keys for _, *keys in table2_ranking_files(wc.seedset)],
    log:
        "logs/statistics/units_table2_{seedset}.log",
    benchmark:
        "benchmarks/rules/statistics/units_table2_{seedset}.tsv"
    wildcard_constraints:
        seedset="tables|claims",
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/ranking_units.py"


rule table2:
    input:
        # descriptive columns (vectors, queries, truncation, steps) from the first tables seed
        evaluations=table2_evaluations(model_seeds("tables")[:1]),
        # each trained row's training summary and config (the dev-loss gate), as committed copies
        model_files=[committed_input(model_files(name, model_seeds("tables")[0])[kind])
                     for name in trained_row_names() for kind in ("summary", "config")],
        # sanity gates of the shared r = 1 models the trained rows start from (rules/nugget.smk)
        base_gates=sorted({f"results/nugget_base/{ROWS[name]['objective']}_gate.json" for name in trained_row_names()}),
        units=units_path("table2", "tables"),
        claims=claims_file(),
        overlap="results/overlap.csv",  # the train/test overlap audit must pass (rules/audit.smk)
        tasks_table="results/table1_tasks.csv",  # NUGGET Table 1, made with Table 2 (rules/audit.smk)
    output:
        csv=report("results/table2.csv", caption="../workflow/report/table2.rst", category="NUGGET"),
        md=report("results/table2.md", caption="../workflow/report/table2.rst", category="NUGGET"),
        figure=report("results/table2.png", caption="../workflow/report/table2.rst", category="NUGGET"),
        tests=tests_report("results/table2_tests.csv", "NUGGET"),
    params:
        rows=config["table2"]["rows"],
        model_dirs={name: committed_folder(model_dir(name, model_seeds("tables")[0])) for name in trained_row_names()},
        seeds=model_seeds("tables"),
        statistics=statistics_params(),
        comparisons=table_comparisons("table2"),
        claims=claims_params(),
        scale=config["scale"],
        base_encoder=config["base_encoder"],
        nugget_encoder=config["nugget"]["encoder"],
        pi_source=config["table2"]["pi"]["source"],
        rr_source=config["table2"]["rr"]["source"],
    log:
        "logs/table2.log",
    benchmark:
        "benchmarks/rules/table2.tsv"
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/table2.py"
