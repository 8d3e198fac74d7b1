"""The distillation work (Burian 2023), its paper-scale tasks (rules/distill_paper_tasks.smk): IMDB's document
sets, the table's rows and their embeddings folders, the per-row result files, the classification head's
settings, the targets of rule all and the IMDB audit entry (formerly rules/distill_paper_tasks_common.smk).

The rule files build one ``DistillPaperTasks`` from the config, the teachers, the students and the seed sets
(rules/distill_paper_tasks_common.smk).
"""

from __future__ import annotations

from typing import Any, Mapping

from multivec.rules.distill_students import (DISTILL_STUDENT_EMBEDDINGS, DISTILL_UNTRAINED_EMBEDDINGS,
                                                DistillStudents)
from multivec.rules.distill_teachers import DistillTeachers, distill_documents, distill_teacher_dir
from multivec.rules.seed_sets import SeedSets

IMDB_SPLITS = {"train": "eval_imdb_train", "test": "eval_imdb_test"}
IMDB_DOCUMENTS = {part: distill_documents(split) for part, split in IMDB_SPLITS.items()}
DISTILL_IMDB_RESULT = "results/distill_imdb/{row}/{seeding}"  # .json (the row) and .reviews.jsonl (per review)


class DistillPaperTasks:
    """The config's ``distill.paper_tasks`` section (off unless ``enabled``)."""

    def __init__(self, config: Mapping[str, Any], teachers: DistillTeachers, students: DistillStudents,
                 seeds: SeedSets):
        self.config = config
        self.settings = config["distill"].get("paper_tasks") or {"enabled": False}
        self.enabled = self.settings["enabled"]
        self.teachers = teachers
        self.students = students
        self.seeds = seeds
        self.targets = ["results/distill_imdb.csv", "results/distill_imdb.md"] if self.enabled else []

    def distill_imdb_rows(self, seedset: str = "tables") -> dict[str, dict[str, Any]]:
        """{row name: {"kind", "seeds": {seed tag: {train|test: embeddings folder}}}}: the teachers' grid, the
        teachers concatenated, the untrained student (seed tag "fixed": deterministic) and every trained student at
        each seed of model_seeds(seedset) (seed tag "seed<seed>")."""
        def folders(path_of):
            return {part: path_of(split) for part, split in IMDB_SPLITS.items()}

        rows = {f"sbert_{m}": {"kind": "structural_teacher",
                               "seeds": {"fixed": folders(lambda s, m=m: distill_teacher_dir("sbert", m, s))}}
                for m in self.teachers.sbert_models}
        rows.update({f"pv_{v}": {"kind": "contextual_teacher",
                                 "seeds": {"fixed": folders(lambda s, v=v: distill_teacher_dir("pv", v, s))}}
                     for v in self.teachers.pv_variants})
        rows["teachers_concatenated"] = {"kind": "teachers_concatenated",
                                         "seeds": {"fixed": folders(lambda s: f"data/distill/concat/{s}")}}
        untrained = folders(lambda s: DISTILL_UNTRAINED_EMBEDDINGS.format(split=s))
        rows["student_untrained"] = {"kind": "untrained_student", "seeds": {"fixed": untrained}}
        for run in self.students.distill_runs():
            rows[f"student_{run}"] = {"kind": "student", "seeds": {
                f"seed{seed}": folders(lambda s, r=run, k=seed: DISTILL_STUDENT_EMBEDDINGS.format(run=r, seed=k,
                                                                                                  split=s))
                for seed in self.seeds.model_seeds(seedset)}}
        return rows

    def distill_imdb_folders(self, row: str, seeding: str) -> dict[str, str]:
        """{train|test: embeddings folder} of one row at one seed tag (of either seed set)."""
        seedings = {**self.distill_imdb_rows("tables")[row]["seeds"], **self.distill_imdb_rows("claims")[row]["seeds"]}
        return seedings[seeding]

    def distill_imdb_results(self, seedset: str, suffix: str) -> list[str]:
        return [DISTILL_IMDB_RESULT.format(row=row, seeding=tag) + suffix
                for row, spec in self.distill_imdb_rows(seedset).items() for tag in spec["seeds"]]

    def distill_imdb_unit_entries(self, seedset: str) -> list[dict[str, Any]]:
        """The IMDB rows as entries of their unit file (multivec.distill.tables.imdb_table.imdb_measurements)."""
        return [{"name": row, "seed": None if tag == "fixed" else int(tag[len("seed"):]),
                 "reviews": DISTILL_IMDB_RESULT.format(row=row, seeding=tag) + ".reviews.jsonl"}
                for row, spec in self.distill_imdb_rows(seedset).items() for tag in spec["seeds"]]

    def distill_imdb_head_config(self, seeding: str) -> dict[str, Any]:
        """The head's settings; a trained student's head is seeded with the student's seed, the others with the
        config seed (so a seed-to-seed SD covers both the student's and its head's training)."""
        seed = self.config["seed"] if seeding == "fixed" else int(seeding[len("seed"):])
        return {**self.settings.get("head", {}), "seed": seed}

    def stat_table(self) -> dict[str, Any]:
        """The statistics layer's IMDB table (StatTables.register's arguments), built only when enabled."""
        return {"table": "distill_imdb", "work": "distill", "rows": list(self.distill_imdb_rows()),
                "metrics": ["imdb_accuracy"], "built": self.enabled}

    def audit_entries(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """(corpora, tasks) for the overlap audit: the distillation training documents against IMDB test (when
        enabled)."""
        if not self.enabled:
            return {}, {}
        return {}, {"distill_imdb": {"format": "text_jsonl", "files": [IMDB_DOCUMENTS["test"]]}}
