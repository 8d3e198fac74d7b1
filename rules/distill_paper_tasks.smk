# Document embedding by distillation (Burian 2023), paper-scale evaluation (§5.1.1): IMDB sentiment.
# The official aclImdb_v1.tar.gz -> data/built/distill/eval_imdb_{train,test}.jsonl ({id, text, label});
# every SBERT teacher and every Paragraph Vector variant embeds both splits (PV: infer_vector from the
# saved model the teachers' rules trained once, models/paragraph_vector/<variant>/); the students, the
# untrained student and the two teachers concatenated come from rules/distill.smk's rules (their {split}
# is eval_imdb_train/test); the thesis's head trains on each row's frozen training embeddings -> test accuracy
# and each test review's prediction: results/distill_imdb/<row>/<fixed|seed<n>>.{json,reviews.jsonl} ->
# results/units/distill_imdb.<seedset>.parquet -> results/distill_imdb.{csv,md} (CIs, comparisons).
# Off at demo (distill.paper_tasks.enabled: false; IMDB is not offline); config/paper.yaml turns it on,
# which adds DISTILL_PAPER_TARGETS to rule all and IMDB test to the overlap audit.

include: "distill_paper_tasks_common.smk"


rule distill_imdb_documents:
    # IMDB 25k/25k from the official tarball (multivec.distill.data.imdb; counts checked).
    input:
        raw("imdb", "aclImdb_v1.tar.gz"),
    output:
        train=IMDB_DOCUMENTS["train"],
        test=IMDB_DOCUMENTS["test"],
        meta="data/built/distill/imdb/meta.json",
    params:
        per_split=DISTILL_PAPER.get("imdb_reviews_per_split"),
    log:
        "logs/distill/imdb_documents.log",
    benchmark:
        "benchmarks/rules/distill/imdb_documents.tsv"
    resources:
        **family_resources("build"),
    conda:
        "../envs/distill_teachers.yaml"
    script:
        "../workflow/scripts/distill_imdb_documents.py"


rule distill_imdb_structural_teacher:
    # The teachers' SBERT script on the IMDB splits (length-sorted batches, truncation share recorded).
    input:
        documents=lambda wc: distill_documents(wc.split),
        model=lambda wc: [MPNET_MODEL] if wc.model in ("mpnet", "all-mpnet-base-v2") else [],
    output:
        folder=directory("data/distill/teachers/sbert_{model}/{split}"),
    params:
        settings=DISTILL["structural_teacher"],
    wildcard_constraints:
        model="|".join(map(re.escape, SBERT_MODELS)),
        split="|".join(IMDB_SPLITS.values()),
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


rule distill_imdb_contextual_teacher:
    # infer_vector of the IMDB splits from the saved model, train then test (a fixed call order).
    input:
        model=PV_MODEL,
        evaluation=[IMDB_DOCUMENTS["train"], IMDB_DOCUMENTS["test"]],
    output:
        evaluation=[directory(distill_teacher_dir("pv", "{variant}", IMDB_SPLITS[p])) for p in ("train", "test")],
    params:
        hash_seed=DISTILL["contextual_teacher"]["hash_seed"],
    wildcard_constraints:
        variant="|".join(map(re.escape, PV_VARIANTS)),
    log:
        "logs/distill/pv_imdb_{variant}.log",
    benchmark:
        "benchmarks/rules/distill/pv_imdb_{variant}.tsv"
    threads: 1
    resources:
        **family_resources("encode"),
    conda:
        "../envs/distill_teachers.yaml"
    script:
        "../workflow/scripts/distill_pv_embed.py"


rule distill_imdb_head:
    # The thesis's head on one row's frozen IMDB embeddings (one seed of a trained student): train on train,
    # accuracy on test, each test review's prediction kept.
    input:
        train=lambda wc: distill_imdb_folders(wc.row, wc.seeding)["train"],
        test=lambda wc: distill_imdb_folders(wc.row, wc.seeding)["test"],
        train_documents=IMDB_DOCUMENTS["train"],
        test_documents=IMDB_DOCUMENTS["test"],
    output:
        row=f"{DISTILL_IMDB_RESULT}.json",
        reviews=f"{DISTILL_IMDB_RESULT}.reviews.jsonl",
    params:
        kind=lambda wc: distill_imdb_rows()[wc.row]["kind"],
        head=lambda wc: distill_imdb_head_config(wc.seeding),
    wildcard_constraints:
        row="|".join(map(re.escape, distill_imdb_rows())),
        seeding="fixed|seed\\d+",
    log:
        "logs/distill/imdb_head_{row}_{seeding}.log",
    benchmark:
        "benchmarks/rules/distill/imdb_head_{row}_{seeding}.tsv"
    threads: family_threads("train")
    resources:
        **family_resources("train", gpu=True),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/distill_imdb_head.py"


rule units_distill_imdb:
    # Every IMDB row's test reviews, correct x 100 per review, at the seeds of the seed set.
    input:
        lambda wc: distill_imdb_results(wc.seedset, ".reviews.jsonl"),
    output:
        units_path("distill_imdb", "{seedset}"),
    params:
        entries=lambda wc: distill_imdb_unit_entries(wc.seedset),
    wildcard_constraints:
        seedset="tables|claims",
    log:
        "logs/distill/units_distill_imdb_{seedset}.log",
    benchmark:
        "benchmarks/rules/distill/units_distill_imdb_{seedset}.tsv"
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/distill_imdb_units.py"


rule distill_imdb_table:
    input:
        rows=distill_imdb_results("tables", ".json"),
        units=units_path("distill_imdb", "tables"),
        claims=claims_file(),
    output:
        csv=report("results/distill_imdb.csv", caption="../workflow/report/distill_imdb.rst",
                   category="Distillation"),
        md=report("results/distill_imdb.md", caption="../workflow/report/distill_imdb.rst",
                  category="Distillation"),
        tests=tests_report("results/distill_imdb_tests.csv", "Distillation"),
    params:
        statistics=statistics_params(),
        comparisons=table_comparisons("distill_imdb"),
        claims=claims_params(),
        note=lambda wc: (f"Scale {config['scale']}; student {config['distill']['student']['backbone']}, "
                         f"seeds {', '.join(map(str, model_seeds('tables')))}."),
    log:
        "logs/distill/imdb_table.log",
    benchmark:
        "benchmarks/rules/distill/imdb_table.tsv"
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/distill_imdb_table.py"
