"""NUGGET's work, Table 2 (rules/table2.smk, rules/token_pooling.smk): its runs (a trained row once per seed,
the others once), their encodings, evaluation files and per-query rankings, the wildcard patterns of runs and
encoders, and the models whose memory use is measured (formerly in rules/common.smk and
rules/token_pooling_common.smk).

The rule files build one ``Table2Runs`` from the config, the zoo (multivec.rules.nugget_zoo) and the seed
sets (multivec.rules.seed_sets), and bind its methods to the names the rules use (rules/common.smk).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from multivec.nugget.tables.encoding_folders import BASE_ENCODINGS
from multivec.rules.nugget_zoo import TRAINED_KINDS, NuggetZoo
from multivec.rules.paths import (SEED_PATTERN, TASKS, document_task_documents, document_task_gold, frozen_bottom_dir,
                                  task_dir, token_pooling_dir)
from multivec.rules.seed_sets import SeedSets


def parse_run(run: str) -> tuple[str, int | None]:
    """(row name, seed or None) of a `row_run`."""
    trained = re.fullmatch(r"(.+)/seed([0-9]+)", run)
    return (trained.group(1), int(trained.group(2))) if trained else (run, None)


class Table2Runs:
    """Table 2's rows (``table2.rows``) as runs, encodings and evaluation files."""

    def __init__(self, config: Mapping[str, Any], zoo: NuggetZoo, seeds: SeedSets):
        self.config = config
        self.zoo = zoo
        self.seeds = seeds
        self.rows = zoo.rows
        trained = zoo.trained_row_names()
        trained_run = "(?:" + "|".join(re.escape(n) for n in trained) + f")/seed{SEED_PATTERN}"
        # The {encoder} wildcard: the base encoder's encodings or a trained row's run; the {run} wildcard: any run.
        self.encoder_pattern = f"{re.escape(BASE_ENCODINGS)}|{trained_run}"
        self.run_pattern = "|".join([trained_run, *(re.escape(n) for n in self.rows if n not in trained)])
        # The ratios Table 2's token-pooling rows ask for (rules/token_pooling.smk pools the base states at each).
        self.token_pooling_ratios = sorted({row["ratio"] for row in self.rows.values()
                                            if row["kind"] == "token_pooling"})

    def is_trained(self, row_name: str) -> bool:
        return self.rows[row_name]["kind"] in TRAINED_KINDS

    def row_run(self, row_name: str, seed: Any = None) -> str:
        """One evaluation run of a Table 2 row: a trained row at one seed (`<row>/seed<seed>`), else the row."""
        return f"{row_name}/seed{seed}" if self.is_trained(row_name) else row_name

    def table2_runs(self, seeds: Iterable[Any]) -> list[str]:
        """Every run of Table 2's rows: trained rows once per seed, the others once."""
        seeds = list(seeds)
        return [self.row_run(name, seed) for name in self.rows
                for seed in (seeds if self.is_trained(name) else [None])]

    def encodings_dir(self, run: str, task: str) -> str:
        """A trained row has its own encodings per seed; ColBART and mean-pooled rows share the base encoder's;
        a token-pooling row reads the base states pooled at its ratio (rules/token_pooling.smk)."""
        row, _ = parse_run(run)
        if self.rows[row]["kind"] == "token_pooling":
            return token_pooling_dir(self.rows[row]["ratio"], task)
        encoder = run if self.is_trained(row) else BASE_ENCODINGS
        return f"data/encodings/{encoder}/{task}"

    def evaluation_inputs(self, run: str, task: str) -> dict[str, str]:
        """A run's ranking needs the task and, unless it is BM25, the run's encodings."""
        inputs = {"docs": f"{task_dir(task)}/docs.txt", "task": f"{task_dir(task)}/task.jsonl"}
        if self.rows[parse_run(run)[0]]["kind"] != "bm25":
            inputs["encodings"] = self.encodings_dir(run, task)
        return inputs

    def encoding_inputs(self, encoder: str, task: str) -> dict[str, str]:
        """Encoding a task needs the task and, for a trained row's run, its model (and the shared frozen bottom
        where the row reads it)."""
        inputs = {"docs": f"{task_dir(task)}/docs.txt", "task": f"{task_dir(task)}/task.jsonl"}
        if encoder != BASE_ENCODINGS:
            row, seed = parse_run(encoder)
            inputs.update(self.zoo.model_files(row, seed))
            if self.zoo.shares_frozen_bottom(row):
                inputs["frozen_bottom"] = frozen_bottom_dir(task)
        return inputs

    def table2_evaluations(self, seeds: Iterable[Any], suffix: str = "json") -> list[str]:
        """Every run's evaluation file (`json`: MRR; `rankings.jsonl`: per query) over these training seeds."""
        return [f"results/table2/{run}/{task}.{suffix}" for run in self.table2_runs(seeds) for task in TASKS]

    def table2_ranking_files(self, seedset: str) -> list[tuple[str, str, Any, str]]:
        """(rankings file, row, seed, task) of every Table 2 run of a seed set (units_table2's inputs)."""
        seeds = self.seeds.model_seeds(seedset)
        return [(f"results/table2/{self.row_run(name, seed)}/{task}.rankings.jsonl", name, seed, task)
                for name in self.seeds.rows("table2", seedset, self.rows)
                for seed in (seeds if self.is_trained(name) else [None]) for task in TASKS]

    # -- Table 2's rows on the document tasks (Lee, polarity: the representation matrix, rules/representations.smk)
    def document_task_rows(self, seedset: str) -> list[str]:
        """The rows of a seed set that have vectors (every kind but BM25)."""
        from multivec.nugget.tables.table2_rows import DOCUMENT_TASK_ROW_KINDS

        return [name for name in self.seeds.rows("table2", seedset, self.rows)
                if self.rows[name]["kind"] in DOCUMENT_TASK_ROW_KINDS]

    def document_encoding_inputs(self, encoder: str, tasks: Iterable[str]) -> dict[str, str]:
        """Encoding the document tasks needs their documents (the distillation work's ``eval_<task>.jsonl``, keyed
        by task) and, for a trained row's run, its model (the whole model runs: no frozen bottom is shared for
        these small tasks)."""
        inputs = {task: document_task_documents(task) for task in tasks}
        if encoder != BASE_ENCODINGS:
            inputs.update(self.zoo.model_files(*parse_run(encoder)))
        return inputs

    def document_task_files(self, seedset: str, tasks: Iterable[str]) -> list[tuple[str, str, Any, str, str]]:
        """(encodings folder, row, seed, task, gold folder) of every vector row's run of a seed set on each
        document task (units_table2_document_tasks's inputs)."""
        seeds = self.seeds.model_seeds(seedset)
        return [(self.encodings_dir(self.row_run(name, seed), task), name, seed, task, document_task_gold(task))
                for name in self.document_task_rows(seedset)
                for seed in (seeds if self.is_trained(name) else [None]) for task in tasks]

    def memory_use_models(self) -> dict[str, dict[str, str]]:
        """The models whose memory use is measured: Table 2's trained rows at the first tables seed, then each of
        their objectives' shared r = 1 model; name -> {objective, folder}."""
        seed = self.seeds.model_seeds("tables")[0]
        models = {name: {"objective": self.rows[name]["objective"], "folder": self.zoo.model_dir(name, seed)}
                  for name in self.zoo.trained_row_names()}
        for objective in sorted({m["objective"] for m in models.values()}):
            models[f"{objective}_base_r1"] = {"objective": objective, "folder": self.zoo.base_dir(objective)}
        return models
