# Sub-sentence encoder (Chen et al. 2023): SubEncoder training (§3.2, App. B) on the data builders'
# data/built/subencoder/{train,dev}.jsonl (rules/subencoder_data.smk), atomic-fact retrieval on
# PropSegment dev (Tables 1, 4, 5; App. C.1 baselines), segmenter-predicted queries (Table 8). Each evaluation
# writes its scores (<name>.json) and each query's rankings (<name>.rankings.jsonl, exported as TREC runs by
# rules/interop.smk).

rule subencoder_model_train:
    # One SubEncoder per backbone, output dimension and training seed (statistics.seeds).
    input:
        train="data/built/subencoder/train.jsonl",
        dev="data/built/subencoder/dev.jsonl",
    output:
        weights="models/subencoder/{backbone}_{dim}/seed{seed}/model.safetensors",
        config="models/subencoder/{backbone}_{dim}/seed{seed}/config.json",
        summary="models/subencoder/{backbone}_{dim}/seed{seed}/training_summary.json",
        metrics="models/subencoder/{backbone}_{dim}/seed{seed}/metrics.csv",
    params:
        model=lambda wc: subencoder_model_config(wc.backbone, wc.dim),
        train=lambda wc: rule_settings(subencoder_train_config(wc.backbone, wc.seed)),
        temperature=SUBENCODER["train"]["temperature"],
    log:
        "logs/subencoder/train_{backbone}_{dim}_seed{seed}.log",
    benchmark:
        "benchmarks/rules/subencoder/train_{backbone}_{dim}_seed{seed}.tsv"
    wildcard_constraints:
        backbone="[A-Za-z0-9_.-]+",
        dim="full|d[0-9]+",
        seed="[0-9]+",
    threads: family_threads("train")
    resources:
        # the safety net is a resource, not a param, so raising it resumes (multivec.training.safety_net)
        max_minutes=lambda wc: safety_net_resource(subencoder_train_config(wc.backbone, wc.seed)),
        **family_resources("train", gpu=True),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/subencoder_model_train.py"


rule subencoder_model_pca:
    # Table 5's PCA row (subencoder.model.reduced_pca): the trained full SubEncoder followed by the projection on
    # the first {dim} principal components of its outputs on the training propositions; nothing trains.
    input:
        train="data/built/subencoder/train.jsonl",
        weights="models/subencoder/{backbone}_full/seed{seed}/model.safetensors",
        config="models/subencoder/{backbone}_full/seed{seed}/config.json",
    output:
        weights="models/subencoder/{backbone}_pca{dim}/seed{seed}/model.safetensors",
        config="models/subencoder/{backbone}_pca{dim}/seed{seed}/config.json",
    log:
        "logs/subencoder/pca_{backbone}_{dim}_seed{seed}.log",
    benchmark:
        "benchmarks/rules/subencoder/pca_{backbone}_{dim}_seed{seed}.tsv"
    wildcard_constraints:
        backbone="[A-Za-z0-9_.-]+",
        dim="[0-9]+",
        seed="[0-9]+",
    threads: family_threads("encode")
    resources:
        **family_resources("encode", gpu=True),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/subencoder_model_pca.py"


rule subencoder_eval_base:
    # App. C.1: an untrained encoder (a backbone, or one of Table 1's baseline encoders) with one of the
    # baseline encodings, under every evaluation protocol.
    input:
        **PROPSEGMENT_DEV,
    output:
        json="results/subencoder/retrieval/base_{backbone}_{strategy}.json",
        rankings="results/subencoder/retrieval/base_{backbone}_{strategy}.rankings.jsonl",
    params:
        encoder=lambda wc: SUBENC_ENCODERS[wc.backbone],
        max_tokens=SUBENCODER["model"].get("max_tokens", 128),
        batch_size=SUBENCODER["evaluation"].get("batch_size", 32),
    log:
        "logs/subencoder/eval_base_{backbone}_{strategy}.log",
    benchmark:
        "benchmarks/rules/subencoder/eval_base_{backbone}_{strategy}.tsv"
    wildcard_constraints:
        strategy="mask_pooling|full_mask|token_subset",
    threads: family_threads("encode")
    resources:
        **family_resources("encode", gpu=True),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/subencoder_eval_retrieval.py"


rule subencoder_eval_lexical:
    # Table 1's lexical baseline: candidates ranked by word-set Jaccard with the query, no model.
    input:
        **PROPSEGMENT_DEV,
    output:
        json="results/subencoder/retrieval/lexical_word_jaccard.json",
        rankings="results/subencoder/retrieval/lexical_word_jaccard.rankings.jsonl",
    log:
        "logs/subencoder/eval_lexical.log",
    benchmark:
        "benchmarks/rules/subencoder/eval_lexical.tsv"
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/subencoder_eval_retrieval.py"


rule subencoder_eval_trained:
    input:
        **PROPSEGMENT_DEV,
        model="models/subencoder/{model}/seed{seed}/model.safetensors",
    output:
        json="results/subencoder/retrieval/subencoder_{model}/seed{seed}.json",
        rankings="results/subencoder/retrieval/subencoder_{model}/seed{seed}.rankings.jsonl",
    params:
        batch_size=SUBENCODER["evaluation"].get("batch_size", 32),
    log:
        "logs/subencoder/eval_{model}_seed{seed}.log",
    benchmark:
        "benchmarks/rules/subencoder/eval_{model}_seed{seed}.tsv"
    wildcard_constraints:
        model="[A-Za-z0-9_.-]+",
        seed="[0-9]+",
    threads: family_threads("encode")
    resources:
        **family_resources("encode", gpu=True),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/subencoder_eval_retrieval.py"


rule subencoder_eval_predicted:
    # Table 8: the segmenter's query propositions (Jaccard > match_jaccard with a gold one).
    input:
        **PROPSEGMENT_DEV,
        model="models/subencoder/{model}/seed{seed}/model.safetensors",
    output:
        json="results/subencoder/predicted/subencoder_{model}/seed{seed}.json",
        rankings="results/subencoder/predicted/subencoder_{model}/seed{seed}.rankings.jsonl",
    params:
        batch_size=SUBENCODER["evaluation"].get("batch_size", 32),
        segmenter=SUBENC_SEGMENTER,
        segmenter_settings=SUBENCODER["segmenter"],
        llm=SUBENCODER["llm"],
        match_jaccard=SUBENCODER["evaluation"].get("match_jaccard", 0.8),
        alignment=SUBENCODER["data"]["alignment"],  # App. A.3 mode, the same as the training segments'
    log:
        "logs/subencoder/eval_predicted_{model}_seed{seed}.log",
    benchmark:
        "benchmarks/rules/subencoder/eval_predicted_{model}_seed{seed}.tsv"
    wildcard_constraints:
        model="[A-Za-z0-9_.-]+",
        seed="[0-9]+",
    threads: family_threads("encode")
    resources:
        **family_resources("encode", gpu=True),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/subencoder_eval_retrieval.py"


rule units_subencoder_retrieval:
    # Per-query scores of every row of Table 1, 4, 5 or 8 over a seed set (multivec.subencoder.tables.units).
    input:
        lambda wc: [e["path"] for e in subencoder_unit_entries(wc.table, wc.seedset)],
    output:
        units_path("subencoder_{table}", "{seedset}"),
    params:
        entries=lambda wc: subencoder_unit_entries(wc.table, wc.seedset),
    log:
        "logs/subencoder/units_{table}.{seedset}.log",
    benchmark:
        "benchmarks/rules/subencoder/units_{table}.{seedset}.tsv"
    wildcard_constraints:
        table="table1|table4|table5|table8",
        seedset="tables|claims",
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/subencoder_units.py"


rule subencoder_eval_tables:
    # Tables 1, 4, 5, 8: seed means with 95% CIs over queries, the declared paired comparisons
    # (statistics.comparisons.subencoder_<table>) and the verdicts of each table's claims.
    input:
        unpack(subencoder_table_inputs),
    output:
        **{f"{t}_{ext}": subencoder_table_output(t, ext) for t in SUBENC_RETRIEVAL_TABLES for ext in ("csv", "md")},
        **{f"{t}_tests": tests_report(f"results/subencoder_{t}_tests.csv", SUBENC_CATEGORY) for t in SUBENC_RETRIEVAL_TABLES},
    params:
        tables=SUBENC_RETRIEVAL_TABLES,
        subencoder=SUBENCODER,  # rows, paper rows and the notes' settings (multivec.subencoder.tables.paper_tables)
        scale=config["scale"],
        seed=model_seeds("tables")[0],
        seeds=model_seeds("tables"),
        statistics=statistics_params(),
        comparisons={t: table_comparisons(f"subencoder_{t}") for t in SUBENC_RETRIEVAL_TABLES},
        claims=claims_params(),
    log:
        "logs/subencoder/tables.log",
    benchmark:
        "benchmarks/rules/subencoder/tables.tsv"
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/subencoder_eval_tables.py"


rule subencoder_eval_csts:
    # Table 3 (§4.2.2): LLM-picked condition words encoded in context, cosine, Spearman x 100.
    input:
        csts=lambda wc: SUBENC_CSTS["path"],
        models=[f"{subencoder_model_dir(b, 'full', model_seeds('tables')[0])}/model.safetensors"
                for b in SUBENC_BACKBONES],
    output:
        csv="results/subencoder_table3.csv",
        md="results/subencoder_table3.md",
    params:
        backbones=SUBENCODER["model"]["backbones"],
        llm_models=lambda wc: SUBENC_CSTS["llm_models"],
        llm=SUBENCODER["llm"],
        batch_size=SUBENCODER["evaluation"].get("batch_size", 32),
    log:
        "logs/subencoder/csts.log",
    benchmark:
        "benchmarks/rules/subencoder/csts.tsv"
    threads: family_threads("encode")
    resources:
        **family_resources("encode", gpu=True),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/subencoder_eval_csts.py"
