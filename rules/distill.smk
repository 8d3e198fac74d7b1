# Document embedding by distillation (Burian 2023): the student side. Trains the student with L_S only,
# L_C only and both (one run per contextual loss in distill.runs.contextual_losses), embeds every evaluation
# task's documents with each trained and the untrained student, concatenates the two teachers, and scores
# every row on the demo tasks: results/distill_table.{csv,md}. Training resumes from
# models/distill/<run>/checkpoint/ if a previous run was killed.
#
# Interface with rules/distill_teachers.smk (the teachers' side of issue 9), in one place here:
# documents data/built/distill/{train,eval_<task>}.jsonl; teacher embeddings folders below.

rule distill_student_train:
    input:
        documents=DISTILL_DOCUMENTS.format(split="train"),
        structural=lambda wc: distill_teacher("structural", "train"),
        contextual=lambda wc: distill_teacher("contextual", "train"),
    output:
        weights="models/distill/{run}/model.safetensors",
        config="models/distill/{run}/config.json",
        summary="models/distill/{run}/training_summary.json",
        metrics="models/distill/{run}/metrics.csv",
    params:
        student=distill_student_config(),
        loss=lambda wc: distill_runs()[wc.run],
        train={**config["distill"]["train"], "seed": config["seed"]},
    log:
        "logs/distill/train_{run}.log",
    benchmark:
        "benchmarks/rules/distill/train_{run}.tsv"
    wildcard_constraints:
        run="l[sc]_[a-z_]+(\\+lc_[a-z_]+)?",
    threads: rule_resources("train")["threads"]
    resources:
        mem_mb=rule_resources("train")["mem_mb"],
        runtime=rule_resources("train")["runtime"],
        gpu=rule_resources("train").get("gpu", 0),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/distill_student_train.py"


rule distill_student_embed:
    input:
        documents=DISTILL_DOCUMENTS.format(split="{split}"),
        weights="models/distill/{run}/model.safetensors",
    output:
        folder=directory(DISTILL_STUDENT_EMBEDDINGS),
    params:
        batch_size=config["distill"]["student"]["embed_batch_size"],
    log:
        "logs/distill/embed_{run}_{split}.log",
    benchmark:
        "benchmarks/rules/distill/embed_{run}_{split}.tsv"
    wildcard_constraints:
        run="l[sc]_[a-z_]+(\\+lc_[a-z_]+)?",
        split="eval_[a-z0-9_]+",
    threads: rule_resources("encode")["threads"]
    resources:
        mem_mb=rule_resources("encode")["mem_mb"],
        runtime=rule_resources("encode")["runtime"],
        gpu=rule_resources("encode").get("gpu", 0),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/distill_student_embed.py"


rule distill_untrained_embed:
    input:
        documents=DISTILL_DOCUMENTS.format(split="{split}"),
    output:
        folder=directory(DISTILL_STUDENT_EMBEDDINGS.replace("{run}", "untrained")),
    params:
        student=distill_student_config(),
        batch_size=config["distill"]["student"]["embed_batch_size"],
    log:
        "logs/distill/embed_untrained_{split}.log",
    benchmark:
        "benchmarks/rules/distill/embed_untrained_{split}.tsv"
    wildcard_constraints:
        split="eval_[a-z0-9_]+",
    threads: rule_resources("encode")["threads"]
    resources:
        mem_mb=rule_resources("encode")["mem_mb"],
        runtime=rule_resources("encode")["runtime"],
        gpu=rule_resources("encode").get("gpu", 0),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/distill_student_embed.py"


rule distill_teachers_concat:
    input:
        lambda wc: distill_teacher("structural", wc.split),
        lambda wc: distill_teacher("contextual", wc.split),
    output:
        folder=directory("data/distill/concat/{split}"),
    params:
        action="concat",
    log:
        "logs/distill/concat_{split}.log",
    wildcard_constraints:
        split="eval_[a-z0-9_]+",
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/distill_student_table.py"


rule distill_table:
    input:
        embeddings=lambda wc: sorted({f for row in distill_table_rows() for f in row["embeddings"].values()}),
        summaries=lambda wc: [row["summary"] for row in distill_table_rows() if "summary" in row],
        task_files=lambda wc: sorted({f for t in distill_tasks() for f in distill_task_files(t).values()}),
    output:
        csv="results/distill_table.csv",
        md="results/distill_table.md",
    params:
        action="table",
        rows=lambda wc: distill_table_rows(),
        tasks=lambda wc: distill_tasks(),
        task_files=lambda wc: {t: distill_task_files(t) for t in distill_tasks()},
        note=lambda wc: (f"Scale {config['scale']}; student {config['distill']['student']['backbone']} "
                         f"({config['distill']['train']['max_steps']} steps of batch "
                         f"{config['distill']['train']['batch_size']} x {config['distill']['train'].get('grad_accumulation', 1)}); "
                         f"combination {config['distill']['loss']['combination']} (lambda {config['distill']['loss']['lam']})."),
    log:
        "logs/distill/table.log",
    benchmark:
        "benchmarks/rules/distill/table.tsv"
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/distill_student_table.py"
