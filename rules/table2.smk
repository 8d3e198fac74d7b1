# NUGGET Table 2: document paraphrase identification (PI) and passage reranking (RR),
# MRR x 100 over 20 candidates, one row per model in config table2.rows.


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
    log:
        "logs/tasks/pi.log",
    benchmark:
        "benchmarks/rules/tasks/pi.tsv"
    threads: rule_resources("build")["threads"]
    resources:
        mem_mb=rule_resources("build")["mem_mb"],
        runtime=rule_resources("build")["runtime"],
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
    log:
        "logs/tasks/rr.log",
    benchmark:
        "benchmarks/rules/tasks/rr.tsv"
    threads: rule_resources("build")["threads"]
    resources:
        mem_mb=rule_resources("build")["mem_mb"],
        runtime=rule_resources("build")["runtime"],
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
    threads: rule_resources("encode")["threads"]
    resources:
        mem_mb=rule_resources("encode")["mem_mb"],
        runtime=rule_resources("encode")["runtime"],
        gpu=rule_resources("encode").get("gpu", 0),
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
    threads: rule_resources("encode")["threads"]
    resources:
        mem_mb=rule_resources("encode")["mem_mb"],
        runtime=rule_resources("encode")["runtime"],
        gpu=rule_resources("encode").get("gpu", 0),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/encode_task.py"


rule evaluate_ranking:
    # Rank each query's 20 candidates: MaxSim-mean or cosine of a row's vectors, or BM25.
    input:
        unpack(evaluation_inputs),
    output:
        metrics="results/table2/{row}/{task}.json",
        rankings="results/table2/{row}/{task}.rankings.jsonl",
    params:
        row=lambda wc: ROWS[wc.row],
    log:
        "logs/evaluate/{row}/{task}.log",
    benchmark:
        "benchmarks/rules/evaluate/{row}/{task}.tsv"
    wildcard_constraints:
        task="pi|rr",
        row=ROW_PATTERN,
    threads: rule_resources("encode")["threads"]
    resources:
        mem_mb=rule_resources("encode")["mem_mb"],
        runtime=rule_resources("encode")["runtime"],
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/evaluate_ranking.py"


rule table2:
    input:
        evaluations=table2_evaluations(),
        summaries=[model_files(name)["summary"] for name in trained_row_names()],
        overlap="results/overlap.csv",  # the train/test overlap audit must pass (rules/audit.smk)
        tasks_table="results/table1_tasks.csv",  # NUGGET Table 1, made with Table 2 (rules/audit.smk)
    output:
        csv="results/table2.csv",
        md="results/table2.md",
        figure="results/table2.png",
    params:
        rows=config["table2"]["rows"],
        model_dirs={name: model_dir(name) for name in trained_row_names()},
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
