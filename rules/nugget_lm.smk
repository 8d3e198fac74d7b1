# Table 3 (NUGGET §6.2, App. B.2): language modelling with compressed history. The LM streams are
# built once, one LM per row is trained from its `nugget_analysis` AE model, evaluated at h = 0 and each
# of `nugget_lm.histories`, and the table gathers the rows with the paper's numbers.
NUGGET_LM = config["nugget_lm"]
LM_ROWS = {row["name"]: row for row in NUGGET_LM["rows"]}
LM_DIR = "data/built/nugget_lm"
WIKITEXT103_DIR = "data/extracted/wikitext103_raw/wikitext-103-raw"


def lm_stream_inputs(wildcards):
    if NUGGET_LM["train_source"] == "autoencoding":
        inputs = {"train": corpus("ae", "train"), "dev": corpus("ae", "dev")}
    else:
        inputs = {"train": f"{WIKITEXT103_DIR}/wiki.train.raw", "dev": f"{WIKITEXT103_DIR}/wiki.valid.raw"}
    if NUGGET_LM["eval_source"] == "wikitext2":
        inputs["test"] = raw("wikitext2", "test.txt")
    else:
        inputs["test"] = f"{WIKITEXT103_DIR}/wiki.test.raw"
    return inputs


def lm_ae_model(row):
    """The AE model a row starts from (App. B.2): ratio 0 is the one-vector (TSDAE) model."""
    ratio = LM_ROWS[row]["ratio"]
    return long_model_dir("ae", "0" if ratio == 0 else str(ratio))


def lm_settings(row):
    keys = ("segment_tokens", "train_histories", "freeze_encoder", "compress_tokens", "compress_window",
            "history_source_tokens")
    return {"history": LM_ROWS[row]["history"], **{k: NUGGET_LM[k] for k in keys}}


AUDIT_CORPORA["nugget_lm"] = {"format": "text_jsonl", "files": [f"{LM_DIR}/train.jsonl", f"{LM_DIR}/dev.jsonl"]}
AUDIT_TASKS["nugget_lm_test"] = {"format": "text_jsonl", "files": [f"{LM_DIR}/test.jsonl"]}


rule nugget_lm_streams:
    input:
        unpack(lm_stream_inputs),
    output:
        train=f"{LM_DIR}/train.jsonl",
        dev=f"{LM_DIR}/dev.jsonl",
        test=f"{LM_DIR}/test.jsonl",
    params:
        train_source=NUGGET_LM["train_source"],
    log:
        "logs/build/nugget_lm_streams.log",
    benchmark:
        "benchmarks/rules/build/nugget_lm_streams.tsv"
    resources:
        mem_mb=rule_resources("build")["mem_mb"],
        runtime=rule_resources("build")["runtime"],
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/nugget_lm_streams.py"


rule train_nugget_lm:
    input:
        train=f"{LM_DIR}/train.jsonl",
        dev=f"{LM_DIR}/dev.jsonl",
        init=lambda wc: f"{lm_ae_model(wc.row)}/model.safetensors",
    output:
        weights="models/nugget_lm/{row}/model.safetensors",
        config="models/nugget_lm/{row}/config.json",
        summary="models/nugget_lm/{row}/training_summary.json",
        metrics="models/nugget_lm/{row}/metrics.csv",
    params:
        lm=lambda wc: lm_settings(wc.row),
        train={**train_config(), **NUGGET_LM["train"]},
        max_dev_segments=NUGGET_LM["max_dev_segments"],
        max_train_segments=NUGGET_LM["max_train_segments"],
    log:
        "logs/train/nugget_lm_{row}.log",
    benchmark:
        "benchmarks/rules/train/nugget_lm_{row}.tsv"
    wildcard_constraints:
        row="|".join(re.escape(r) for r in LM_ROWS),
    threads: rule_resources("train")["threads"]
    resources:
        mem_mb=rule_resources("train")["mem_mb"],
        runtime=rule_resources("train")["runtime"],
        gpu=rule_resources("train").get("gpu", 0),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/nugget_lm_train.py"


rule evaluate_nugget_lm:
    input:
        model="models/nugget_lm/{row}/model.safetensors",
        test=f"{LM_DIR}/test.jsonl",
    output:
        perplexity="results/nugget_lm/{row}.json",
        history="results/nugget_lm/{row}.history.safetensors",
    params:
        histories=[0] + list(NUGGET_LM["histories"]),
        max_segments=NUGGET_LM["max_eval_segments"],
        batch_size=NUGGET_LM["eval_batch_size"],
    log:
        "logs/evaluate/nugget_lm_{row}.log",
    benchmark:
        "benchmarks/rules/evaluate/nugget_lm_{row}.tsv"
    wildcard_constraints:
        row="|".join(re.escape(r) for r in LM_ROWS),
    threads: rule_resources("encode")["threads"]
    resources:
        mem_mb=rule_resources("encode")["mem_mb"],
        runtime=rule_resources("encode")["runtime"],
        gpu=rule_resources("train").get("gpu", 0),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/nugget_lm_evaluate.py"


rule nugget_table3:
    input:
        expand("results/nugget_lm/{row}.json", row=list(LM_ROWS)),
    output:
        csv="results/nugget_table3_lm.csv",
        md="results/nugget_table3_lm.md",
    params:
        rows=list(LM_ROWS),
        histories=[0] + list(NUGGET_LM["histories"]),
    log:
        "logs/results/nugget_table3_lm.log",
    benchmark:
        "benchmarks/rules/results/nugget_table3_lm.tsv"
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/nugget_lm_table.py"
