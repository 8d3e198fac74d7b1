# Sub-sentence encoder (Chen et al. 2023): SubEncoder training (§3.2, App. B) on the data builders'
# data/built/subencoder/{train,dev}.jsonl (rules/subencoder_data.smk), atomic-fact retrieval on
# PropSegment dev (Tables 1, 4, 5; App. C.1 baselines), segmenter-predicted queries (Table 8).

rule subencoder_model_train:
    input:
        train="data/built/subencoder/train.jsonl",
        dev="data/built/subencoder/dev.jsonl",
    output:
        weights="models/subencoder/{backbone}_{dim}/model.safetensors",
        config="models/subencoder/{backbone}_{dim}/config.json",
        summary="models/subencoder/{backbone}_{dim}/training_summary.json",
        metrics="models/subencoder/{backbone}_{dim}/metrics.csv",
    params:
        model=lambda wc: subencoder_model_config(wc.backbone, wc.dim),
        train=lambda wc: subencoder_train_config(wc.backbone),
        temperature=SUBENCODER["train"]["temperature"],
    log:
        "logs/subencoder/train_{backbone}_{dim}.log",
    benchmark:
        "benchmarks/rules/subencoder/train_{backbone}_{dim}.tsv"
    wildcard_constraints:
        backbone="[A-Za-z0-9_.-]+",
        dim="full|d[0-9]+",
    threads: rule_resources("train")["threads"]
    resources:
        mem_mb=rule_resources("train")["mem_mb"],
        runtime=rule_resources("train")["runtime"],
        gpu=rule_resources("train").get("gpu", 0),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/subencoder_model_train.py"


rule subencoder_eval_base:
    # App. C.1: the untrained backbone with one of the baseline encodings.
    input:
        **PROPSEGMENT_DEV,
    output:
        "results/subencoder/retrieval/base_{backbone}_{strategy}.json",
    params:
        encoder=lambda wc: SUBENC_BACKBONES[wc.backbone]["encoder"],
        max_tokens=SUBENCODER["model"].get("max_tokens", 128),
        batch_size=SUBENCODER["evaluation"].get("batch_size", 32),
    log:
        "logs/subencoder/eval_base_{backbone}_{strategy}.log",
    benchmark:
        "benchmarks/rules/subencoder/eval_base_{backbone}_{strategy}.tsv"
    wildcard_constraints:
        strategy="mask_pooling|full_mask|token_subset",
    threads: rule_resources("encode")["threads"]
    resources:
        mem_mb=rule_resources("encode")["mem_mb"],
        runtime=rule_resources("encode")["runtime"],
        gpu=rule_resources("encode").get("gpu", 0),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/subencoder_eval_retrieval.py"


rule subencoder_eval_trained:
    input:
        **PROPSEGMENT_DEV,
        model=lambda wc: f"models/subencoder/{wc.model}/model.safetensors",
    output:
        "results/subencoder/retrieval/subencoder_{model}.json",
    params:
        batch_size=SUBENCODER["evaluation"].get("batch_size", 32),
    log:
        "logs/subencoder/eval_{model}.log",
    benchmark:
        "benchmarks/rules/subencoder/eval_{model}.tsv"
    threads: rule_resources("encode")["threads"]
    resources:
        mem_mb=rule_resources("encode")["mem_mb"],
        runtime=rule_resources("encode")["runtime"],
        gpu=rule_resources("encode").get("gpu", 0),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/subencoder_eval_retrieval.py"


rule subencoder_eval_predicted:
    # Table 8: the segmenter's query propositions (Jaccard > match_jaccard with a gold one).
    input:
        **PROPSEGMENT_DEV,
        model=lambda wc: f"models/subencoder/{wc.model}/model.safetensors",
    output:
        "results/subencoder/predicted/subencoder_{model}.json",
    params:
        batch_size=SUBENCODER["evaluation"].get("batch_size", 32),
        segmenter=SUBENC_SEGMENTER,
        segmenter_settings=SUBENCODER["segmenter"],
        llm=SUBENCODER["llm"],
        match_jaccard=SUBENCODER["evaluation"].get("match_jaccard", 0.8),
    log:
        "logs/subencoder/eval_predicted_{model}.log",
    benchmark:
        "benchmarks/rules/subencoder/eval_predicted_{model}.tsv"
    threads: rule_resources("encode")["threads"]
    resources:
        mem_mb=rule_resources("encode")["mem_mb"],
        runtime=rule_resources("encode")["runtime"],
        gpu=rule_resources("encode").get("gpu", 0),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/subencoder_eval_retrieval.py"


rule subencoder_eval_tables:
    input:
        unpack(subencoder_table_inputs),
    output:
        **{f"{t}_{ext}": f"results/subencoder_{t}.{ext}" for t in SUBENC_TABLES if t != "table3"
           for ext in ("csv", "md")},
    params:
        backbones=SUBENCODER["model"]["backbones"],
        baselines=SUBENCODER["evaluation"]["baselines"],
        reduced_dim=SUBENC_REDUCED,
        paper_table5_row=SUBENCODER["model"].get("paper_table5_row"),
        segmenter=SUBENC_SEGMENTER,
        scale=config["scale"],
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
        models=[f"models/subencoder/{b}_full/model.safetensors" for b in SUBENC_BACKBONES],
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
    threads: rule_resources("encode")["threads"]
    resources:
        mem_mb=rule_resources("encode")["mem_mb"],
        runtime=rule_resources("encode")["runtime"],
        gpu=rule_resources("encode").get("gpu", 0),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/subencoder_eval_csts.py"
