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
        inputs["segmenter_model"] = f"{SEGMENTER_MODEL}/model.safetensors"
    return inputs


def subencoder_table7_inputs(wildcards):
    inputs = {}
    for split in SUBSEG["table7_splits"]:
        inputs[f"clusters_{split}"] = PROPSEGMENT_FILE(f"document_clusters.{split}.json")
        inputs[f"propositions_{split}"] = PROPSEGMENT_FILE(f"propositions.{split}.json")
    if "seq2seq" in SUBSEG["table7"]:
        inputs["segmenter_model"] = f"{SEGMENTER_MODEL}/model.safetensors"
    return inputs


# -- model and evaluation
from multivec.subencoder.tables import units as _subenc_units

SUBENCODER = config["subencoder"]
SUBENC_BACKBONES = {b["name"]: b for b in SUBENCODER["model"]["backbones"]}
SUBENC_FIRST = SUBENCODER["model"]["backbones"][0]["name"]
SUBENC_REDUCED = SUBENCODER["model"].get("reduced_dim")
SUBENC_SEGMENTER = SUBENCODER["evaluation"].get("segmenter")
SUBENC_BASELINES = SUBENCODER["evaluation"]["baselines"]
# What the retrieval tables hold: backbones, encodings, Table 1's protocols, lexical and paper baseline rows.
SUBENC_LAYOUT = _subenc_units.Layout.from_config(SUBENCODER)
# Untrained encoders by row name: each backbone's, and the untrained-only baseline encoders of Table 1.
SUBENC_ENCODERS = {b["name"]: b["encoder"] for b in SUBENCODER["model"]["backbones"]}
for _entry in SUBENCODER["evaluation"].get("baseline_encoders") or []:  # names checked unique by multivec.config
    SUBENC_ENCODERS[_entry["name"]] = _entry["encoder"]
# The retrieval set's files; the News clusters' ids (masked text) let the reader tell a News record from one
# whose cluster matches nothing (multivec.subencoder.evaluation.retrieval_set).
PROPSEGMENT_DEV = {name: raw("propsegment", f"v1/{name}.dev.json")
                   for name in ("document_clusters", "propositions", "relationships",
                                "document_cluster_retrieval_instructions")}
SUBENC_CSTS = SUBENCODER["evaluation"].get("csts")  # Table 3, opt-in: C-STS must be fetched by the user
# Tables 1, 4, 5, 8: atomic-fact retrieval (one rule); Table 7: segmentation (rules/subencoder_data.smk).
SUBENC_RETRIEVAL_TABLES = ["table1", "table4"] + (["table5"] if SUBENC_REDUCED else []) \
    + (["table8"] if SUBENC_SEGMENTER else [])
SUBENC_TABLES = SUBENC_RETRIEVAL_TABLES + ["table7"] + (["table3"] if SUBENC_CSTS else [])
SUBENC_CATEGORY = "Sub-sentence encoder"  # report() category of every table of this work


def subencoder_model_dir(backbone, dim="full", seed="{seed}"):
    """A SubEncoder's folder: one per backbone, output dimension and training seed."""
    return f"models/subencoder/{backbone}_{_subenc_units.dim_name(dim)}/seed{seed}"


def subencoder_model_config(backbone, dim_name):
    model = SUBENCODER["model"]
    return {"encoder": SUBENC_BACKBONES[backbone]["encoder"], "head": "mlp", "mlp_hidden": model.get("mlp_hidden"),
            "output_dim": model.get("output_dim") if dim_name == "full" else int(dim_name[1:]),
            "max_tokens": model.get("max_tokens", 128)}


def subencoder_train_config(backbone, seed):
    """Training settings of one SubEncoder; ``seed`` is the model's own (its path's), not config["seed"]."""
    train = {k: v for k, v in SUBENCODER["train"].items() if k != "temperature"}
    return {**train, "lr": SUBENC_BACKBONES[backbone]["lr"], "seed": int(seed)}


def subencoder_unit_entries(table, seedset):
    """Per (row, seed) evaluation files of a retrieval table over a seed set (multivec.subencoder.tables.units)."""
    return _subenc_units.unit_entries(table, SUBENC_LAYOUT, model_seeds(seedset))


def subencoder_table_inputs(wildcards):
    """Each retrieval table's unit file over the table seeds, and the evaluations of the first table seed
    (what the tables show beside the statistics: dims, query counts, index sizes)."""
    first = model_seeds("tables")[:1]
    inputs = {"claims": claims_file()}
    for table in SUBENC_RETRIEVAL_TABLES:
        inputs[f"units_{table}"] = units_path(_subenc_units.stat_table_name(table), "tables")
        inputs[f"evaluations_{table}"] = [e["path"] for e in _subenc_units.unit_entries(table, SUBENC_LAYOUT, first)]
    return inputs


def subencoder_table_output(table, ext):
    """results/subencoder_<table>.<ext>, flagged for the report with its caption (workflow/report/)."""
    return report(f"results/subencoder_{table}.{ext}", caption=f"../workflow/report/subencoder_{table}.rst",
                  category=SUBENC_CATEGORY)


# The statistics layer's tables (rules/statistics_common.smk): rows and metrics as the unit files name them.
import dataclasses

for _table in ("table1", "table4", "table5", "table8"):
    register_stat_table(_subenc_units.stat_table_name(_table), "subencoder",
                        [s.row for s in _subenc_units.table_rows(
                            _table, dataclasses.replace(SUBENC_LAYOUT, reduced_dim=SUBENC_REDUCED or 64))],
                        list(_subenc_units.TABLE_METRICS[_table]), built=_table in SUBENC_RETRIEVAL_TABLES)
register_stat_table(_subenc_units.stat_table_name("table7"), "subencoder",
                    [_subenc_units.table7_row(kind, split) for kind in SUBSEG["table7"]
                     for split in SUBSEG["table7_splits"]], list(_subenc_units.TABLE7_METRICS))
# Table 3 (C-STS, opt-in): no per-unit scores yet (its rule writes only the Spearman r of each row), so it is
# registered as not built at every scale and no claim can read it.
register_stat_table(_subenc_units.stat_table_name("table3"), "subencoder",
                    [_subenc_units.subencoder_row(b) for b in SUBENC_BACKBONES], ["spearman_x100"], built=False)


# Overlap audit (rules/audit.smk): the training sentences against PropSegment dev, where Table 1 evaluates.
AUDIT_CORPORA["subencoder_pairs"] = {"format": "sentence_pairs", "files": [f"{SUBENCODER_DATA_DIR}/pairs/pairs.jsonl"]}
AUDIT_TASKS["propsegment_dev"] = {"format": "propsegment_clusters",
                                  "files": [raw("propsegment", "v1/document_clusters.dev.json")]}
