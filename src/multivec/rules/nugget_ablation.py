"""NUGGET's work, Table 4's ablations (rules/nugget_ablation.smk): each row's model settings, zoo folder and
encoding inputs, the token-pooling row read from Table 2's evaluation, and the files of each seed set
(formerly rules/nugget_ablation_common.smk).

Every row is a model of the zoo (multivec.rules.nugget_zoo): NUGGET (l = 3) is the MT r = 0.1 model of
Table 2 and Fig. 4, and rows whose settings coincide (smoke: l = 6, 9 map to l = 3) read one folder. That the
config keeps these consistent is checked by the config layer before any job
(multivec.config.cross_checks.table4_zoo_problems).

The rule files build one ``NuggetAblation`` from the config, the zoo, Table 2's runs and the seed sets
(rules/nugget_ablation_common.smk).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from multivec.nugget import zoo as _zoo
from multivec.nugget.configuration import SENTENCE_RATIO, ablation_config, ablation_settings
from multivec.rules.nugget_table2 import Table2Runs
from multivec.rules.nugget_zoo import NuggetZoo, zoo_dir, zoo_files
from multivec.rules.paths import TASKS, frozen_bottom_dir, task_dir
from multivec.rules.seed_sets import SeedSets

ABLATION_DEFAULT = "nugget_l3"  # the zoo's MT r = 0.1 model (Table 2, Fig. 4)
# Table 4's token-pooling row: Table 2's token_pooling row at Table 4's r, read from Table 2's
# evaluation (results/table2/<run>/<task>.*; pooled and scored once). No model, so no seed: one run.
ABLATION_POOLING = "token_pooling"


def ablation_layers(config: Mapping[str, Any]) -> dict[int, int]:
    """``nugget_ablation.layers``: the paper's scorer layer -> ours."""
    return {int(paper): ours for paper, ours in config["nugget_ablation"]["layers"].items()}


class NuggetAblation:
    """Table 4's rows (``nugget_ablation.rows``) as zoo models."""

    def __init__(self, config: Mapping[str, Any], zoo: NuggetZoo, table2: Table2Runs, seeds: SeedSets):
        self.config = config
        self.zoo = zoo
        self.seeds = seeds
        self.rows = config["nugget_ablation"]["rows"]
        self.layers = ablation_layers(config)
        self.pattern = "|".join(re.escape(n) for n in self.rows)  # the {name} wildcard
        self.ratio = float(self.ablation_base()["ratio"])
        pooling_runs = [name for name, row in zoo.rows.items()
                        if row["kind"] == "token_pooling" and float(row["ratio"]) == self.ratio]
        self.pooling_run = table2.row_run(pooling_runs[0], None) if pooling_runs else None
        self.table4_rows = self.rows + ([ABLATION_POOLING] if self.pooling_run else [])

    # -- settings
    def ablation_base(self, seed: Any = None) -> dict[str, Any]:
        """NuggetConfig fields every ablation starts from: those of the zoo's MT r = 0.1 model."""
        return self.zoo.long_model_config("mt", "0.1", seed)

    def ablation_model_config(self, name: str, seed: Any = None) -> dict[str, Any]:
        """The row's NuggetConfig fields; r_sb rows keep ratio "r_sb" until train_nugget.py reads the share."""
        return ablation_settings(name, self.ablation_base(seed), layers=self.layers)

    def ablation_variant(self, name: str) -> str:
        """The zoo variant of a Table 4 row."""
        return _zoo.variant_of(self.ablation_model_config(name))

    def ablation_uses_sentence_share(self, name: str) -> bool:
        return self.ablation_model_config(name)["ratio"] == SENTENCE_RATIO

    def ablation_shares_frozen_bottom(self, name: str) -> bool:
        """Only rows whose frozen bottom is Table 2's (embeddings + layers 1..nugget.scorer_layer) read it."""
        cfg = ablation_config(name, self.ablation_base(), layers=self.layers)
        return (self.config["table2"]["share_frozen_bottom"]
                and cfg.scorer_layer == self.config["nugget"]["scorer_layer"] and cfg.frozen_bottom >= cfg.scorer_layer)

    # -- folders and inputs
    def ablation_model_dir(self, name: str, seed: Any) -> str:
        return zoo_dir("mt", self.ablation_variant(name), seed)

    def ablation_model_files(self, name: str, seed: Any) -> dict[str, str]:
        return zoo_files("mt", self.ablation_variant(name), seed)

    def ablation_encoding_inputs(self, name: str, seed: Any, task: str) -> dict[str, str]:
        """Encoding a task with a row's model: the task, the model, and the shared frozen bottom where it reads it."""
        inputs = {"docs": f"{task_dir(task)}/docs.txt", "task": f"{task_dir(task)}/task.jsonl",
                  **self.ablation_model_files(name, seed)}
        if self.ablation_shares_frozen_bottom(name):
            inputs["frozen_bottom"] = frozen_bottom_dir(task)
        return inputs

    # -- evaluations
    def ablation_pooling_evaluations(self, suffix: str = "json") -> list[str]:
        """Table 2's evaluation files of the token-pooling row at Table 4's r (empty when Table 2 has none)."""
        if self.pooling_run is None:
            return []
        return [f"results/table2/{self.pooling_run}/{task}.{suffix}" for task in TASKS]

    def ablation_pooling_params(self) -> dict[str, Any] | None:
        """The token-pooling row for nugget_ablation_table.py: its Table 4 name, Table 2 run and ratio (or None)."""
        if self.pooling_run is None:
            return None
        return {"row": ABLATION_POOLING, "run": self.pooling_run, "ratio": self.ratio}

    def ablation_evaluations(self, seeds: Iterable[Any], suffix: str = "json") -> list[str]:
        """Every ablation row's evaluation file at each seed (`json`: MRR; `rankings.jsonl`: per query)."""
        seeds = list(seeds)
        return [f"results/nugget_table4/{name}/seed{seed}/{task}.{suffix}"
                for name in self.rows for seed in seeds for task in TASKS]

    def ablation_ranking_files(self, seedset: str) -> list[tuple[str, str, Any, str]]:
        """(rankings file, row, seed, task) of every Table 4 run of a seed set (units_nugget_table4's inputs)."""
        rows = self.seeds.rows("nugget_table4", seedset, self.table4_rows)
        files = [(f"results/nugget_table4/{name}/seed{seed}/{task}.rankings.jsonl", name, seed, task)
                 for name in rows if name != ABLATION_POOLING for seed in self.seeds.model_seeds(seedset)
                 for task in TASKS]
        if ABLATION_POOLING in rows:  # Table 2's rankings of the token-pooling run, under Table 4's row name
            files += [(f"results/table2/{self.pooling_run}/{task}.rankings.jsonl", ABLATION_POOLING, None, task)
                      for task in TASKS]
        return files
