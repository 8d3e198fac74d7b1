# Document embedding by distillation (Burian 2023): the student side. Trains the student with L_S only,
# L_C only and both (one run per contextual loss in distill.runs.contextual_losses) at each seed
# (models/distill/<run>/seed<seed>/), embeds every evaluation task's documents with each trained and the
# untrained student, concatenates the two teachers, scores every row per evaluation unit
# (results/units/distill_table.<seedset>.parquet) and writes results/distill_table.{csv,md} with
# CIs, the declared comparisons and the claims' verdicts. Training resumes from
# models/distill/<run>/seed<seed>/checkpoint/ if a previous run was killed.
#
# Interface with rules/distill_teachers.smk (the teachers' side of the distillation), in one place here:
# documents data/built/distill/{train,eval_<task>}.jsonl; teacher embeddings folders below.

rule distill_student_train:
    input:
        documents=DISTILL_DOCUMENTS.format(split="train"),
        structural=lambda wc: distill_teacher("structural", "train"),
        contextual=lambda wc: distill_teacher("contextual", "train"),
    output:
        weights=f"{DISTILL_STUDENT_MODEL}/model.safetensors",
        config=f"{DISTILL_STUDENT_MODEL}/config.json",
        summary=f"{DISTILL_STUDENT_MODEL}/training_summary.json",
        metrics=f"{DISTILL_STUDENT_MODEL}/metrics.csv",
    params:
        student=lambda wc: distill_student_config(wc.seed, wc.run),
        loss=lambda wc: distill_runs()[wc.run],
        train=lambda wc: rule_settings(distill_train_config(wc.seed)),
    log:
        "logs/distill/train_{run}_seed{seed}.log",
    benchmark:
        "benchmarks/rules/distill/train_{run}_seed{seed}.tsv"
    wildcard_constraints:
        run=DISTILL_RUN_PATTERN,
        seed="\\d+",
    threads: family_threads("train")
    resources:
        # the safety net is a resource, not a param, so raising it resumes (multivec.training.safety_net)
        max_minutes=lambda wc: safety_net_resource(distill_train_config(wc.seed)),
        **family_resources("train", gpu=True),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/distill_student_train.py"


rule distill_student_embed:
    input:
        documents=DISTILL_DOCUMENTS.format(split="{split}"),
        weights=f"{DISTILL_STUDENT_MODEL}/model.safetensors",
    output:
        folder=directory(DISTILL_STUDENT_EMBEDDINGS),
    params:
        batch_size=config["distill"]["student"]["embed_batch_size"],
        teacher_limit=config["distill"]["loss"]["mask_max_tokens"],
    log:
        "logs/distill/embed_{run}_seed{seed}_{split}.log",
    benchmark:
        "benchmarks/rules/distill/embed_{run}_seed{seed}_{split}.tsv"
    wildcard_constraints:
        run=DISTILL_RUN_PATTERN,
        seed="\\d+",
        split="eval_[a-z0-9_]+",
    threads: family_threads("encode")
    resources:
        **family_resources("encode", gpu=True),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/distill_student_embed.py"


rule distill_untrained_embed:
    input:
        documents=DISTILL_DOCUMENTS.format(split="{split}"),
    output:
        folder=directory(DISTILL_UNTRAINED_EMBEDDINGS),
    params:
        student=distill_student_config(),
        batch_size=config["distill"]["student"]["embed_batch_size"],
        teacher_limit=config["distill"]["loss"]["mask_max_tokens"],
    log:
        "logs/distill/embed_untrained_{split}.log",
    benchmark:
        "benchmarks/rules/distill/embed_untrained_{split}.tsv"
    wildcard_constraints:
        split="eval_[a-z0-9_]+",
    threads: family_threads("encode")
    resources:
        **family_resources("encode", gpu=True),
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
    benchmark:
        "benchmarks/rules/distill/concat_{split}.tsv"
    wildcard_constraints:
        split="eval_[a-z0-9_]+",
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/distill_student_table.py"


rule units_distill_table:
    # Every row of results/distill_table (the teachers, their concatenation, the untrained and the trained
    # students at every seed of the seed set) scored per evaluation unit.
    input:
        embeddings=lambda wc: distill_entry_folders(distill_table_entries(wc.seedset)),
        gold=distill_gold_folders(),
    output:
        units_path("distill_table", "{seedset}"),
    params:
        entries=lambda wc: distill_table_entries(wc.seedset),
        tasks=distill_tasks(),
        task_files={t: {"task": f"data/built/distill/eval_{t}"} for t in distill_tasks()},
    wildcard_constraints:
        seedset="tables|claims",
    log:
        "logs/distill/units_distill_table_{seedset}.log",
    benchmark:
        "benchmarks/rules/distill/units_distill_table_{seedset}.tsv"
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/distill_units.py"


rule distill_frozen_check:
    # The sanity row (heads trained on a frozen backbone) must embed exactly as the untrained student, vector by
    # vector; the record is committed, so that the table re-renders without the embeddings.
    input:
        distill_entry_folders(frozen_check_entries(distill_table_entries("tables"))),
    output:
        "results/distill_frozen_check.json",
    params:
        entries=frozen_check_entries(distill_table_entries("tables")),
        tasks=distill_tasks(),
    log:
        "logs/distill/frozen_check.log",
    benchmark:
        "benchmarks/rules/distill/frozen_check.tsv"
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/distill_frozen_check.py"


rule distill_table:
    input:
        # each embeddings folder's meta.json and each training summary, as committed copies
        committed=committed_entry_files(distill_table_entries("tables")),
        frozen_check="results/distill_frozen_check.json",
        units=units_path("distill_table", "tables"),
        claims=claims_file(),
    output:
        csv=report("results/distill_table.csv", caption="../workflow/report/distill_table.rst",
                   category="Distillation"),
        md=report("results/distill_table.md", caption="../workflow/report/distill_table.rst",
                  category="Distillation"),
        tests=tests_report("results/distill_table_tests.csv", "Distillation"),
    params:
        action="table",
        entries=committed_entries(distill_table_entries("tables")),
        tasks=distill_tasks(),
        statistics=statistics_params(),
        comparisons=table_comparisons("distill_table"),
        claims=claims_params(),
        note=distill_note(),
    log:
        "logs/distill/table.log",
    benchmark:
        "benchmarks/rules/distill/table.tsv"
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/distill_student_table.py"


rule distill_loss_curves:
    # Every loss term of every trained student (table seeds), first vs last fifth of its logged
    # windows, and the curves drawn; the frozen-backbone run trains its heads only.
    input:
        metrics=[run["metrics"] for run in distill_curve_runs()],
    output:
        csv=report("results/distill_loss_curves.csv", caption="../workflow/report/distill_loss_curves.rst",
                   category="Distillation"),
        md=report("results/distill_loss_curves.md", caption="../workflow/report/distill_loss_curves.rst",
                  category="Distillation"),
        png=report("results/distill_loss_curves.png", caption="../workflow/report/distill_loss_curves.rst",
                   category="Distillation"),
    params:
        runs=distill_curve_runs(),
        share=0.2,
        note=distill_note(),
    log:
        "logs/distill/loss_curves.log",
    benchmark:
        "benchmarks/rules/distill/loss_curves.tsv"
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/distill_loss_curves.py"


rule distill_geometry:
    # Where each student's embedding space went: mean pairwise cosine and agreement with each
    # teacher's pairwise cosines, each student against the untrained one (multivec.distill.analysis.geometry).
    input:
        embeddings=sorted({entry["embeddings"][task] for entry in distill_table_entries("tables")
                           for task in distill_geometry_tasks()}),
    output:
        csv=report("results/distill_geometry.csv", caption="../workflow/report/distill_geometry.rst",
                   category="Distillation"),
        md=report("results/distill_geometry.md", caption="../workflow/report/distill_geometry.rst",
                  category="Distillation"),
        tests=tests_report("results/distill_geometry_tests.csv", "Distillation"),
    params:
        entries=distill_table_entries("tables"),
        tasks=distill_geometry_tasks(),
        # the tables' alpha and confidence; the geometry's own resample counts (distill.evaluation.geometry)
        statistics={**statistics_params(), "bootstrap_resamples": DISTILL_GEOMETRY["bootstrap_resamples"],
                    "permutation_resamples": DISTILL_GEOMETRY["permutation_resamples"]},
        note=distill_note(),
    log:
        "logs/distill/geometry.log",
    benchmark:
        "benchmarks/rules/distill/geometry.tsv"
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/distill_geometry.py"
