# Path helpers and config look-ups of the sub-sentence encoder's rules (Chen et al. 2023):
# rules/subencoder_data.smk (training data, Table 7) and rules/subencoder.smk (model, Tables 1, 3-5, 8).

# -- data construction
SUBDATA = config["subencoder"]["data"]
SUBSEG = config["subencoder"]["segmenter"]
SUBENCODER_DATA_DIR = "data/built/subencoder"
SEGMENTER_MODEL = "models/subencoder_segmenter"
PROPSEGMENT_FILE = lambda name: raw("propsegment", f"v1/{name}")


def subencoder_pairs_input(wildcards):
    if SUBDATA["pairs_source"] == "propsegment_test":
        # TEST clusters only: dev is where the retrieval tables are evaluated.
        return PROPSEGMENT_FILE("document_clusters.test.json")
    return raw("zhou2022_pairs", "pairs.jsonl")


def subencoder_segments_inputs(wildcards):
    inputs = {"pairs": f"{SUBENCODER_DATA_DIR}/pairs/pairs.jsonl"}
    if SUBSEG["kind"] == "seq2seq":  # paper: the LLM's seed share, the distilled model for the rest
        inputs["seed"] = f"{SUBENCODER_DATA_DIR}/llm_seed/segments.jsonl"
        inputs["segmenter_model"] = SEGMENTER_MODEL
    return inputs


def subencoder_table7_inputs(wildcards):
    inputs = {}
    for split in SUBSEG["table7_splits"]:
        inputs[f"clusters_{split}"] = PROPSEGMENT_FILE(f"document_clusters.{split}.json")
        inputs[f"propositions_{split}"] = PROPSEGMENT_FILE(f"propositions.{split}.json")
    if "seq2seq" in SUBSEG["table7"]:
        inputs["segmenter_model"] = SEGMENTER_MODEL
    return inputs


# -- model and evaluation
SUBENCODER = config["subencoder"]
SUBENC_BACKBONES = {b["name"]: b for b in SUBENCODER["model"]["backbones"]}
SUBENC_FIRST = SUBENCODER["model"]["backbones"][0]["name"]
SUBENC_REDUCED = SUBENCODER["model"].get("reduced_dim")
SUBENC_SEGMENTER = SUBENCODER["evaluation"].get("segmenter")
PROPSEGMENT_DEV = {name: raw("propsegment", f"v1/{name}.dev.json")
                   for name in ("document_clusters", "propositions", "relationships")}
SUBENC_CSTS = SUBENCODER["evaluation"].get("csts")  # Table 3, opt-in: C-STS must be fetched by the user
SUBENC_TABLES = ["table1", "table4"] + (["table5"] if SUBENC_REDUCED else []) + (["table8"] if SUBENC_SEGMENTER else []) \
    + (["table3"] if SUBENC_CSTS else [])


def subencoder_dim_name(dim):
    return "full" if dim in (None, "full") else f"d{dim}"


def subencoder_model_dir(backbone, dim="full"):
    return f"models/subencoder/{backbone}_{subencoder_dim_name(dim)}"


def subencoder_model_config(backbone, dim_name):
    model = SUBENCODER["model"]
    return {"encoder": SUBENC_BACKBONES[backbone]["encoder"], "head": "mlp", "mlp_hidden": model.get("mlp_hidden"),
            "output_dim": model.get("output_dim") if dim_name == "full" else int(dim_name[1:]),
            "max_tokens": model.get("max_tokens", 128)}


def subencoder_train_config(backbone):
    train = {k: v for k, v in SUBENCODER["train"].items() if k != "temperature"}
    return {**train, "lr": SUBENC_BACKBONES[backbone]["lr"], "seed": config["seed"]}


def subencoder_trained_results():
    names = [f"subencoder_{b}_full" for b in SUBENC_BACKBONES]
    if SUBENC_REDUCED:
        names.append(f"subencoder_{SUBENC_FIRST}_d{SUBENC_REDUCED}")
    return names


def subencoder_table_inputs(wildcards):
    base = [f"results/subencoder/retrieval/base_{b}_{s}.json" for b in SUBENC_BACKBONES
            for s in SUBENCODER["evaluation"]["baselines"]]
    trained = [f"results/subencoder/retrieval/{name}.json" for name in subencoder_trained_results()]
    predicted = [f"results/subencoder/predicted/subencoder_{b}_full.json" for b in SUBENC_BACKBONES] \
        if SUBENC_SEGMENTER else []
    return {"base": base, "trained": trained, "predicted": predicted}


# Overlap audit (rules/audit.smk): the training sentences against PropSegment dev, where Table 1 evaluates.
AUDIT_CORPORA["subencoder_pairs"] = {"format": "sentence_pairs", "files": [f"{SUBENCODER_DATA_DIR}/pairs/pairs.jsonl"]}
AUDIT_TASKS["propsegment_dev"] = {"format": "propsegment_clusters",
                                  "files": [raw("propsegment", "v1/document_clusters.dev.json")]}
