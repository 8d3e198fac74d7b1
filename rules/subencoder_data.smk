# Sub-sentence encoder (Chen et al. 2023): training data construction (§3.3, App. A) and
# Table 7 (segmentation quality against PropSegment). The library (src/multivec/subencoder)
# does the work; this file only names files.


# The oracle segmenter's files: the human segmentations of the TEST split the pairs come from, and the DEV
# clusters the tables evaluate on, which it checks it shares nothing with.
SUBENC_ORACLE_INPUTS = {
    "human_clusters": PROPSEGMENT_FILE("document_clusters.test.json"),
    "human_segmentations": PROPSEGMENT_FILE("propositions.test.json"),
    "evaluation_clusters": PROPSEGMENT_FILE("document_clusters.dev.json"),
} if SUBSEG["kind"] == "oracle" else {}


rule subencoder_data_pairs:
    # Unlabelled sentence pairs from comparable text.
    input:
        pairs_input=subencoder_pairs_input,
    output:
        pairs=f"{SUBENCODER_DATA_DIR}/pairs/pairs.jsonl",
        meta=f"{SUBENCODER_DATA_DIR}/pairs/meta.json",
    params:
        settings=SUBDATA,
    log:
        "logs/subencoder_data/pairs.log",
    benchmark:
        "benchmarks/rules/subencoder_data/pairs.tsv"
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/subencoder_data_pairs.py"


rule subencoder_data_llm_seed:
    # Paper scale: the App. A.1 prompt on a seeded share of the sentences (cached client).
    input:
        pairs=f"{SUBENCODER_DATA_DIR}/pairs/pairs.jsonl",
    output:
        segments=f"{SUBENCODER_DATA_DIR}/llm_seed/segments.jsonl",
        meta=f"{SUBENCODER_DATA_DIR}/llm_seed/meta.json",
    params:
        segmenter=SUBSEG,
        alignment=SUBDATA["alignment"],
        llm=config["subencoder"]["llm"],
        seed=config["seed"],
    log:
        "logs/subencoder_data/llm_seed.log",
    benchmark:
        "benchmarks/rules/subencoder_data/llm_seed.tsv"
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/subencoder_data_llm_seed.py"


rule subencoder_data_train_segmenter:
    # Paper scale: T5 fine-tuned on the LLM's claims (App. A.2), on the project's training engine.
    input:
        seed=f"{SUBENCODER_DATA_DIR}/llm_seed/segments.jsonl",
    output:
        # Files, not directory(): Snakemake deletes a directory output before rerunning a killed job,
        # which would delete checkpoint/ and restart from step 0 instead of resuming.
        weights=f"{SEGMENTER_MODEL}/model.safetensors",
        config=f"{SEGMENTER_MODEL}/config.json",
        summary=f"{SEGMENTER_MODEL}/training_summary.json",
        metrics=f"{SEGMENTER_MODEL}/metrics.csv",
    params:
        segmenter=SUBSEG,
        seed=config["seed"],
    log:
        "logs/subencoder_data/train_segmenter.log",
    benchmark:
        "benchmarks/rules/subencoder_data/train_segmenter.tsv"
    threads: family_threads("train")
    resources:
        **family_resources("train", gpu=True),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/subencoder_data_train_segmenter.py"


rule subencoder_data_segments:
    # Every sentence of the pairs -> propositions -> App. A.3 char spans (the oracle: human token spans).
    input:
        unpack(subencoder_segments_inputs),
        **SUBENC_ORACLE_INPUTS,
    output:
        segments=f"{SUBENCODER_DATA_DIR}/segments/segments.jsonl",
        meta=f"{SUBENCODER_DATA_DIR}/segments/meta.json",
    params:
        segmenter=SUBSEG,
        alignment=SUBDATA["alignment"],
        llm=config["subencoder"]["llm"],
    log:
        "logs/subencoder_data/segments.log",
    benchmark:
        "benchmarks/rules/subencoder_data/segments.tsv"
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/subencoder_data_segments.py"


rule subencoder_data_training:
    # Positive proposition pairs (bidirectional entailment) -> the train/dev rows the model reads.
    input:
        pairs=f"{SUBENCODER_DATA_DIR}/pairs/pairs.jsonl",
        segments=f"{SUBENCODER_DATA_DIR}/segments/segments.jsonl",
        segments_meta=f"{SUBENCODER_DATA_DIR}/segments/meta.json",
    output:
        train=f"{SUBENCODER_DATA_DIR}/train.jsonl",
        dev=f"{SUBENCODER_DATA_DIR}/dev.jsonl",
        meta=f"{SUBENCODER_DATA_DIR}/meta.json",
    params:
        settings=SUBDATA,
        linking=SUBDATA["linking"],  # which positive links give shared labels (docs/subencoder.md)
        nli=config["subencoder"]["nli"],
        seed=config["seed"],
    log:
        "logs/subencoder_data/training.log",
    benchmark:
        "benchmarks/rules/subencoder_data/training.tsv"
    threads: family_threads("encode")
    resources:
        **family_resources("encode", gpu=True),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/subencoder_data_training.py"


rule subencoder_table7_scores:
    # Table 7: every segmenter of the DAG against PropSegment's human segmentations, per sentence.
    input:
        unpack(subencoder_table7_inputs),
    output:
        "results/subencoder/table7_scores.json",
    params:
        segmenter=SUBSEG,
        alignment=SUBDATA["alignment"],
        llm=config["subencoder"]["llm"],
        splits=SUBSEG["table7_splits"],
        max_sentences=SUBSEG.get("table7_max_sentences", 0),
    log:
        "logs/subencoder_data/table7_scores.log",
    benchmark:
        "benchmarks/rules/subencoder_data/table7_scores.tsv"
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/subencoder_data_table7_scores.py"


rule units_subencoder_table7:
    # Per-sentence match counts of Table 7 (segmenters are not trained: both seed sets are the same).
    input:
        scores="results/subencoder/table7_scores.json",
    output:
        units_path("subencoder_table7", "{seedset}"),
    log:
        "logs/subencoder_data/units_table7.{seedset}.log",
    benchmark:
        "benchmarks/rules/subencoder_data/units_table7.{seedset}.tsv"
    wildcard_constraints:
        seedset="tables|claims",
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/subencoder_units.py"


rule subencoder_data_table7:
    # Table 7 with 95% CIs over sentences, the declared comparisons and the table's claims.
    input:
        scores="results/subencoder/table7_scores.json",
        units=units_path("subencoder_table7", "tables"),
        claims=claims_file(),
    output:
        csv=subencoder_table_output("table7", "csv"),
        md=subencoder_table_output("table7", "md"),
        tests=tests_report("results/subencoder_table7_tests.csv", SUBENC_CATEGORY),
    params:
        stat_table="subencoder_table7",
        statistics=statistics_params(),
        comparisons=table_comparisons("subencoder_table7"),
        claims=claims_params(),
        scale_line=f"Scale: {config['scale']}; PropSegment v1 Wikipedia clusters, splits {', '.join(SUBSEG['table7_splits'])}.",
        training_segmenter=SUBSEG["kind"],
        alignment=SUBDATA["alignment"],
    log:
        "logs/subencoder_data/table7.log",
    benchmark:
        "benchmarks/rules/subencoder_data/table7.tsv"
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/subencoder_data_table7.py"
