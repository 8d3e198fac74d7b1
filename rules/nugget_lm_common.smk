# Helpers of rules/nugget_lm.smk (Table 3, NUGGET §6.2): settings, inputs and audit registration.
NUGGET_LM = config["nugget_lm"]
LM_ROWS = {row["name"]: row for row in NUGGET_LM["rows"]}
LM_DIR = "data/built/nugget_lm"
WIKITEXT103_DIR = "data/extracted/wikitext103_raw/wikitext-103-raw"


from multivec.nugget.lm_table3 import table3_metrics as _table3_metrics


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


def lm_ae_model(row, seed):
    """The AE model a row starts from (App. B.2), of the same training seed: ratio 0 is the one-vector model."""
    ratio = LM_ROWS[row]["ratio"]
    return long_model_dir("ae", "0" if ratio == 0 else str(ratio), seed)


def lm_histories():
    """Every h Table 3 evaluates: 0, then `nugget_lm.histories`."""
    return [0] + list(NUGGET_LM["histories"])


def lm_segment_files(seedset):
    """(per-segment word NLL JSONL, row, seed) of every LM of a seed set (units_nugget_table3)."""
    return [(f"results/nugget_lm/{row}/seed{seed}.segments.jsonl", row, seed)
            for row in seedset_rows("nugget_table3", seedset, LM_ROWS) for seed in model_seeds(seedset)]


def lm_settings(row):
    keys = ("segment_tokens", "train_histories", "freeze_encoder", "compress_tokens", "compress_window",
            "history_source_tokens")
    settings = {"history": LM_ROWS[row]["history"], **{k: NUGGET_LM[k] for k in keys}}
    if settings["history"] == "nuggets":  # only nugget memories carry positions: the other LMs keep their params
        settings["memory_positions"] = NUGGET_LM["memory_positions"]
    return settings


# The LM (decoder) trained on these streams is scored on nugget_lm_test only; at paper scale its
# WikiText-103 train streams are also where RR draws passages for the Table 2 models.
AUDIT_CORPORA["nugget_lm"] = {"format": "text_jsonl", "files": [f"{LM_DIR}/train.jsonl", f"{LM_DIR}/dev.jsonl"],
                              "evaluated_on": ["nugget_lm_test"]}
AUDIT_TASKS["nugget_lm_test"] = {"format": "text_jsonl", "files": [f"{LM_DIR}/test.jsonl"]}

register_stat_table("nugget_table3", "nugget", rows=list(LM_ROWS), metrics=_table3_metrics(lm_histories()))
