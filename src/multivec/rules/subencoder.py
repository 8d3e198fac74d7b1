"""The sub-sentence encoder's work (Chen et al. 2023): paths and config look-ups of rules/subencoder_data.smk
(training data, Table 7) and rules/subencoder.smk (model, Tables 1, 3-5, 8), the tables it registers with the
statistics layer and its overlap-audit entries (formerly rules/subencoder_common.smk).

The rule files build one ``Subencoder`` from the config and the seed sets (rules/subencoder_common.smk).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from multivec.rules.paths import raw
from multivec.rules.seed_sets import SeedSets
from multivec.statistics.workflow_tables import units_path
from multivec.subencoder.tables import units as _subenc_units

SUBENCODER_DATA_DIR = "data/built/subencoder"
SEGMENTER_MODEL = "models/subencoder_segmenter"
SUBENC_CATEGORY = "Sub-sentence encoder"  # report() category of every table of this work


def propsegment_file(name: str) -> str:
    """A file of the PropSegment release (v1)."""
    return raw("propsegment", f"v1/{name}")


def subencoder_model_dir(backbone: str, dim: Any = "full", seed: Any = "{seed}") -> str:
    """A SubEncoder's folder: one per backbone, output dimension and training seed."""
    return f"models/subencoder/{backbone}_{_subenc_units.dim_name(dim)}/seed{seed}"


def table_output(table: str, ext: str) -> dict[str, str]:
    """results/subencoder_<table>.<ext> with its report caption (workflow/report/) and category: the arguments
    of Snakemake's report()."""
    return {"value": f"results/subencoder_{table}.{ext}", "caption": f"../workflow/report/subencoder_{table}.rst",
            "category": SUBENC_CATEGORY}


class Subencoder:
    """The config's ``subencoder`` section as the rules read it."""

    def __init__(self, config: Mapping[str, Any], seeds: SeedSets):
        self.seeds = seeds
        subencoder = self.settings = config["subencoder"]
        # -- data construction
        self.data = subencoder["data"]
        self.segmenter = subencoder["segmenter"]
        # -- model and evaluation
        self.backbones = {b["name"]: b for b in subencoder["model"]["backbones"]}
        self.first = subencoder["model"]["backbones"][0]["name"]
        self.reduced = subencoder["model"].get("reduced_dim")
        self.evaluation_segmenter = subencoder["evaluation"].get("segmenter")
        self.baselines = subencoder["evaluation"]["baselines"]
        # What the retrieval tables hold: backbones, encodings, Table 1's protocols, lexical and paper baseline rows.
        self.layout = _subenc_units.Layout.from_config(subencoder)
        # Untrained encoders by row name: each backbone's, and the untrained-only baseline encoders of Table 1.
        self.encoders = {b["name"]: b["encoder"] for b in subencoder["model"]["backbones"]}
        for entry in subencoder["evaluation"].get("baseline_encoders") or []:  # names checked unique by multivec.config
            self.encoders[entry["name"]] = entry["encoder"]
        # The retrieval set's files; the News clusters' ids (masked text) let the reader tell a News record from
        # one whose cluster matches nothing (multivec.subencoder.evaluation.retrieval_set).
        self.propsegment_dev = {name: raw("propsegment", f"v1/{name}.dev.json")
                                for name in ("document_clusters", "propositions", "relationships",
                                             "document_cluster_retrieval_instructions")}
        self.csts = subencoder["evaluation"].get("csts")  # Table 3, opt-in: C-STS must be fetched by the user
        # Tables 1, 4, 5, 8: atomic-fact retrieval (one rule); Table 7: segmentation (rules/subencoder_data.smk).
        self.retrieval_tables = ["table1", "table4"] + (["table5"] if self.reduced else []) \
            + (["table8"] if self.evaluation_segmenter else [])
        self.tables = self.retrieval_tables + ["table7"] + (["table3"] if self.csts else [])

    # -- data construction
    def subencoder_pairs_input(self) -> str:
        if self.data["pairs_source"] == "propsegment_test":
            # TEST clusters only: dev is where the retrieval tables are evaluated.
            return propsegment_file("document_clusters.test.json")
        return raw("zhou2022_pairs", "pairs.jsonl")

    def subencoder_segments_inputs(self) -> dict[str, str]:
        inputs = {"pairs": f"{SUBENCODER_DATA_DIR}/pairs/pairs.jsonl"}
        if self.segmenter["kind"] == "seq2seq":  # paper: the LLM's seed share, the distilled model for the rest
            inputs["seed"] = f"{SUBENCODER_DATA_DIR}/llm_seed/segments.jsonl"
            inputs["segmenter_model"] = f"{SEGMENTER_MODEL}/model.safetensors"
        return inputs

    def subencoder_table7_inputs(self) -> dict[str, str]:
        inputs = {}
        for split in self.segmenter["table7_splits"]:
            inputs[f"clusters_{split}"] = propsegment_file(f"document_clusters.{split}.json")
            inputs[f"propositions_{split}"] = propsegment_file(f"propositions.{split}.json")
        if "seq2seq" in self.segmenter["table7"]:
            inputs["segmenter_model"] = f"{SEGMENTER_MODEL}/model.safetensors"
        return inputs

    # -- model and evaluation
    def subencoder_model_config(self, backbone: str, dim_name: str) -> dict[str, Any]:
        model = self.settings["model"]
        return {"encoder": self.backbones[backbone]["encoder"], "head": "mlp", "mlp_hidden": model.get("mlp_hidden"),
                "output_dim": model.get("output_dim") if dim_name == "full" else int(dim_name[1:]),
                "max_tokens": model.get("max_tokens", 128)}

    def subencoder_train_config(self, backbone: str, seed: Any) -> dict[str, Any]:
        """Training settings of one SubEncoder; ``seed`` is the model's own (its path's), not config["seed"]."""
        train = {k: v for k, v in self.settings["train"].items() if k != "temperature"}
        return {**train, "lr": self.backbones[backbone]["lr"], "seed": int(seed)}

    def subencoder_unit_entries(self, table: str, seedset: str) -> list:
        """Per (row, seed) evaluation files of a retrieval table over a seed set (multivec.subencoder.tables.units)."""
        return _subenc_units.unit_entries(table, self.layout, self.seeds.model_seeds(seedset))

    def subencoder_table_inputs(self) -> dict[str, Any]:
        """Each retrieval table's unit file over the table seeds, and the evaluations of the first table seed
        (what the tables show beside the statistics: dims, query counts, index sizes)."""
        first = self.seeds.model_seeds("tables")[:1]
        inputs: dict[str, Any] = {"claims": self.seeds.claims_path}
        for table in self.retrieval_tables:
            inputs[f"units_{table}"] = units_path(_subenc_units.stat_table_name(table), "tables")
            inputs[f"evaluations_{table}"] = [e["path"] for e in _subenc_units.unit_entries(table, self.layout, first)]
        return inputs

    # -- registrations
    def stat_tables(self) -> list[dict[str, Any]]:
        """The statistics layer's tables (StatTables.register's arguments): rows and metrics as the unit files
        name them. Table 3 (C-STS, opt-in) has no per-unit scores yet (its rule writes only the Spearman r of each
        row), so it is registered as not built at every scale and no claim can read it."""
        tables = [{"table": _subenc_units.stat_table_name(table), "work": "subencoder",
                   "rows": [s.row for s in _subenc_units.table_rows(
                       table, dataclasses.replace(self.layout, reduced_dim=self.reduced or 64))],
                   "metrics": list(_subenc_units.TABLE_METRICS[table]), "built": table in self.retrieval_tables}
                  for table in ("table1", "table4", "table5", "table8")]
        tables.append({"table": _subenc_units.stat_table_name("table7"), "work": "subencoder",
                       "rows": [_subenc_units.table7_row(kind, split) for kind in self.segmenter["table7"]
                                for split in self.segmenter["table7_splits"]],
                       "metrics": list(_subenc_units.TABLE7_METRICS), "built": True})
        tables.append({"table": _subenc_units.stat_table_name("table3"), "work": "subencoder",
                       "rows": [_subenc_units.subencoder_row(b) for b in self.backbones],
                       "metrics": ["spearman_x100"], "built": False})
        return tables

    @staticmethod
    def audit_entries() -> tuple[dict[str, Any], dict[str, Any]]:
        """(corpora, tasks) for the overlap audit: the training sentences against PropSegment dev, where Table 1
        evaluates."""
        corpora = {"subencoder_pairs": {"format": "sentence_pairs",
                                        "files": [f"{SUBENCODER_DATA_DIR}/pairs/pairs.jsonl"]}}
        tasks = {"propsegment_dev": {"format": "propsegment_clusters",
                                     "files": [raw("propsegment", "v1/document_clusters.dev.json")]}}
        return corpora, tasks
