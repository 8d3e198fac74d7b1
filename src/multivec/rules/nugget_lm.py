"""NUGGET's work, Table 3 (rules/nugget_lm.smk, NUGGET section 6.2): the language models' rows and settings,
their streams' inputs, the AE model each row starts from, the per-segment files of each seed set and the
overlap audit's entries (formerly rules/nugget_lm_common.smk).

The rule files build one ``NuggetLM`` from the config, the zoo and the seed sets
(rules/nugget_lm_common.smk).
"""

from __future__ import annotations

from typing import Any, Mapping

from multivec.rules.nugget_zoo import NuggetZoo
from multivec.rules.paths import corpus, raw
from multivec.rules.seed_sets import SeedSets

LM_DIR = "data/built/nugget_lm"
WIKITEXT103_DIR = "data/extracted/wikitext103_raw/wikitext-103-raw"
# The settings of nugget_lm that every row's LM shares.
LM_SETTING_KEYS = ("segment_tokens", "train_histories", "freeze_encoder", "compress_tokens", "compress_window",
                   "history_source_tokens")


class NuggetLM:
    """Table 3's rows (``nugget_lm.rows``) and settings (``nugget_lm``)."""

    def __init__(self, config: Mapping[str, Any], zoo: NuggetZoo, seeds: SeedSets):
        self.settings = config["nugget_lm"]
        self.rows = {row["name"]: row for row in self.settings["rows"]}
        self.zoo = zoo
        self.seeds = seeds

    def lm_stream_inputs(self) -> dict[str, str]:
        """The texts the LM streams are cut from: train and dev (nugget_lm.train_source), test (eval_source)."""
        if self.settings["train_source"] == "autoencoding":
            inputs = {"train": corpus("ae", "train"), "dev": corpus("ae", "dev")}
        else:
            inputs = {"train": f"{WIKITEXT103_DIR}/wiki.train.raw", "dev": f"{WIKITEXT103_DIR}/wiki.valid.raw"}
        if self.settings["eval_source"] == "wikitext2":
            inputs["test"] = raw("wikitext2", "test.txt")
        else:
            inputs["test"] = f"{WIKITEXT103_DIR}/wiki.test.raw"
        return inputs

    def lm_ae_model(self, row: str, seed: Any) -> str:
        """The AE model a row starts from (App. B.2), of the same training seed: ratio 0 is the one-vector model."""
        ratio = self.rows[row]["ratio"]
        return self.zoo.long_model_dir("ae", "0" if ratio == 0 else str(ratio), seed)

    def lm_histories(self) -> list[int]:
        """Every h Table 3 evaluates: 0, then `nugget_lm.histories`."""
        return [0] + list(self.settings["histories"])

    def lm_segment_files(self, seedset: str) -> list[tuple[str, str, Any]]:
        """(per-segment word NLL JSONL, row, seed) of every LM of a seed set (units_nugget_table3)."""
        return [(f"results/nugget_lm/{row}/seed{seed}.segments.jsonl", row, seed)
                for row in self.seeds.rows("nugget_table3", seedset, self.rows)
                for seed in self.seeds.model_seeds(seedset)]

    def lm_settings(self, row: str) -> dict[str, Any]:
        """The LM's settings of a row: its history kind and the shared ones (memory positions for nuggets only)."""
        settings = {"history": self.rows[row]["history"], **{k: self.settings[k] for k in LM_SETTING_KEYS}}
        if settings["history"] == "nuggets":  # only nugget memories carry positions: the other LMs keep their params
            settings["memory_positions"] = self.settings["memory_positions"]
        return settings

    @staticmethod
    def audit_entries() -> tuple[dict[str, Any], dict[str, Any]]:
        """(corpora, tasks) for the overlap audit: the LM (decoder) trained on these streams is scored on
        nugget_lm_test only; at paper scale its WikiText-103 train streams are also where RR draws passages for
        the Table 2 models."""
        corpora = {"nugget_lm": {"format": "text_jsonl", "files": [f"{LM_DIR}/train.jsonl", f"{LM_DIR}/dev.jsonl"],
                                 "evaluated_on": ["nugget_lm_test"]}}
        tasks = {"nugget_lm_test": {"format": "text_jsonl", "files": [f"{LM_DIR}/test.jsonl"]}}
        return corpora, tasks
