"""The distillation work (Burian 2023), its students (rules/distill.smk): the runs (loss combinations), the
students' settings and folders, the table's rows and the loss curves' inputs (formerly
rules/distill_common.smk).

Interface with the teachers' side (multivec.rules.distill_teachers), in one place here: documents
data/built/distill/{train,eval_<task>}.jsonl; the chosen teachers' embeddings folders.

The rule files build one ``DistillStudents`` from the config, the teachers and the seed sets
(rules/distill_common.smk).
"""

from __future__ import annotations

from typing import Any, Mapping

from multivec.rules.distill_teachers import DistillTeachers
from multivec.rules.seed_sets import SeedSets

DISTILL_DOCUMENTS = "data/built/distill/{split}.jsonl"
# A trained student and its embeddings carry their training seed (statistics.seeds); the untrained student
# and the teachers are deterministic (config seed) and have none.
DISTILL_STUDENT_MODEL = "models/distill/{run}/seed{seed}"
DISTILL_STUDENT_EMBEDDINGS = "data/distill/student/{run}/seed{seed}/{split}"
DISTILL_UNTRAINED_EMBEDDINGS = "data/distill/student/untrained/{split}"
DISTILL_RUN_PATTERN = "l[sc]_[a-z_]+(\\+lc_[a-z_]+)?"
FROZEN_SUFFIX = "_frozen"  # the sanity run: both losses, backbone frozen (its row must equal the untrained one)


def distill_loss_label(run: str, loss: Mapping[str, Any]) -> str:
    """The table's loss column: the losses of the run, and whether its backbone was frozen."""
    label = "+".join(x for x in (loss["structural"], loss["contextual"]) if x)
    return f"{label} (backbone frozen)" if run.endswith(FROZEN_SUFFIX) else label


def distill_entry_folders(entries: list[dict[str, Any]]) -> list[str]:
    """Every embeddings folder of the table's entries, sorted and once."""
    return sorted({folder for entry in entries for folder in entry["embeddings"].values()})


def committed_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``entries`` as the distillation table reads them: each embeddings folder replaced by the folder of its
    committed ``meta.json`` and each training summary by its committed copy (``multivec.io.committed_inputs``)."""
    from multivec.io.committed_inputs import committed_folder, committed_input

    out = []
    for entry in entries:
        entry = {**entry, "embeddings": {task: committed_folder(folder) for task, folder in entry["embeddings"].items()}}
        if "summary" in entry:
            entry["summary"] = committed_input(entry["summary"])
        out.append(entry)
    return out


def committed_entry_files(entries: list[dict[str, Any]]) -> list[str]:
    """The committed copies ``committed_entries`` reads: every folder's ``meta.json`` and every summary, once."""
    from multivec.io.committed_inputs import committed_input

    return sorted({committed_input(f"{folder}/meta.json") for folder in distill_entry_folders(entries)}
                  | {committed_input(e["summary"]) for e in entries if "summary" in e})


def frozen_check_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries the frozen-backbone check compares: every frozen row and the untrained student (none when no
    row is frozen)."""
    frozen = [e for e in entries if e.get("frozen")]
    return frozen + [e for e in entries if e["kind"] == "untrained_student"] if frozen else []


class DistillStudents:
    """The config's ``distill`` section as the students' rules read it."""

    def __init__(self, config: Mapping[str, Any], teachers: DistillTeachers, seeds: SeedSets):
        self.config = config
        self.distill = config["distill"]
        self.teachers = teachers
        self.seeds = seeds
        self.geometry = self.distill["evaluation"].get("geometry") or {"tasks": []}

    def distill_tasks(self) -> list[str]:
        """The demo evaluation tasks (the teachers' side owns distill.evaluation)."""
        return list(self.distill["evaluation"]["tasks"])

    def distill_geometry_tasks(self) -> list[str]:
        """The evaluation tasks of results/distill_geometry (distill.evaluation.geometry.tasks that are built)."""
        return [t for t in self.geometry["tasks"] if t in self.distill_tasks()]

    def distill_task_files(self, task: str) -> dict[str, str]:
        """What evaluate_embeddings needs beside the embeddings: the task's documents file."""
        return {"documents": DISTILL_DOCUMENTS.format(split=f"eval_{task}")}

    def distill_runs(self) -> dict[str, dict[str, Any]]:
        """{run name: loss settings}: L_S only, then L_C only and both for each contextual loss, and (runs.frozen)
        both with the first contextual loss and the backbone frozen (run name ending in FROZEN_SUFFIX)."""
        loss, runs = self.distill["loss"], self.distill["runs"]
        out = {f"ls_{loss['structural']}": {**loss, "contextual": None}}
        for variant in runs["contextual_losses"]:
            out[f"lc_{variant}"] = {**loss, "structural": None, "contextual": variant}
            out[f"ls_{loss['structural']}+lc_{variant}"] = {**loss, "contextual": variant}
        if runs.get("frozen", False):
            variant = runs["contextual_losses"][0]
            out[f"ls_{loss['structural']}+lc_{variant}{FROZEN_SUFFIX}"] = {**loss, "contextual": variant}
        return out

    def distill_student_config(self, seed: Any = None, run: str = "") -> dict[str, Any]:
        """The student's settings; ``seed`` (a trained student's) initialises its heads, else the config seed; a
        run named ...FROZEN_SUFFIX trains its heads only."""
        student = {k: v for k, v in self.distill["student"].items() if k != "embed_batch_size"}
        return {**student, "seed": self.config["seed"] if seed is None else int(seed),
                "freeze_backbone": str(run).endswith(FROZEN_SUFFIX)}

    def distill_note(self) -> str:
        """The table's first line: scale, student, schedule, seeds and the loss combination."""
        train, student, loss = self.distill["train"], self.distill["student"], self.distill["loss"]
        chunks = f" in chunks of {student['chunk_tokens']}" if student.get("chunk_tokens") else ""
        # mask_max_tokens null: L_S on every document, however long (the authors' mm_mse_final, an overlay)
        structural_mask = (f"the structural teacher reads {loss['mask_max_tokens']} tokens"
                           if loss.get("mask_max_tokens") is not None else "L_S on every document (no length mask)")
        return (f"Scale {self.config['scale']}; student {student['backbone']} reading up to {student['max_tokens']} "
                f"tokens{chunks} "
                f"({train['max_steps']} steps of batch {train['batch_size']} x {train.get('grad_accumulation', 1)}, "
                f"lr {train['lr']} backbone / {train.get('lr_scratch') or train['lr']} heads, "
                f"seeds {', '.join(map(str, self.seeds.model_seeds('tables')))}); combination {loss['combination']} "
                f"(lambda {loss['lam']}); {structural_mask}.")

    def distill_train_config(self, seed: Any) -> dict[str, Any]:
        """The training settings of a student trained with ``seed`` (batch order, dropout)."""
        return {**self.distill["train"], "seed": int(seed)}

    def distill_teacher(self, side: str, split: str) -> str:
        """The chosen teacher's embeddings (distill.structural_teacher.teacher / contextual_teacher.teacher)."""
        if side == "structural":
            return self.teachers.structural_teacher_dir(split)
        return self.teachers.contextual_teacher_dir(split)

    def distill_metrics(self) -> list[str]:
        """The metric names of the distillation tables' unit files (multivec.distill.evaluation.demo_tasks.METRICS)."""
        from multivec.distill.evaluation.demo_tasks import METRICS

        return [metric for task in self.distill_tasks() for metric in METRICS[task]]

    def distill_table_entries(self, seedset: str = "tables") -> list[dict[str, Any]]:
        """One entry per (row, seed) of results/distill_table: rows named by role (the same at every scale, as
        config/claims.yaml names them); the trained students at every seed of model_seeds(seedset). For `claims`,
        only the rows a claim names (SeedSets.rows): the frozen sanity row trains at the table seeds only."""
        tasks = self.distill_tasks()
        backbone = self.distill["student"]["backbone"]
        entries = [
            {"name": "structural_teacher", "kind": "structural_teacher", "seed": None,
             "model": f"sbert_{self.distill['structural_teacher']['teacher']}",
             "embeddings": {t: self.distill_teacher("structural", f"eval_{t}") for t in tasks}},
            {"name": "contextual_teacher", "kind": "contextual_teacher", "seed": None,
             "model": f"pv_{self.distill['contextual_teacher']['teacher']}",
             "embeddings": {t: self.distill_teacher("contextual", f"eval_{t}") for t in tasks}},
            {"name": "teachers_concatenated", "kind": "teachers_concatenated", "seed": None, "model": "",
             "embeddings": {t: f"data/distill/concat/eval_{t}" for t in tasks}},
            {"name": "student_untrained", "kind": "untrained_student", "seed": None, "model": backbone,
             "embeddings": {t: DISTILL_UNTRAINED_EMBEDDINGS.format(split=f"eval_{t}") for t in tasks}},
        ]
        for run, loss in self.distill_runs().items():
            for seed in self.seeds.model_seeds(seedset):
                entries.append({"name": f"student_{run}", "kind": "student", "seed": seed,
                                "frozen": run.endswith(FROZEN_SUFFIX), "model": backbone,
                                "loss": distill_loss_label(run, loss),
                                "summary": f"{DISTILL_STUDENT_MODEL.format(run=run, seed=seed)}/training_summary.json",
                                "embeddings": {t: DISTILL_STUDENT_EMBEDDINGS.format(run=run, seed=seed,
                                                                                    split=f"eval_{t}")
                                               for t in tasks}})
        kept = set(self.seeds.rows("distill_table", seedset, [e["name"] for e in entries]))
        return [e for e in entries if e["name"] in kept]

    def distill_curve_runs(self) -> list[dict[str, Any]]:
        """{row, seed, metrics} per trained student of results/distill_table (its metrics.csv, beside the summary)."""
        return [{"row": e["name"], "seed": e["seed"],
                 "metrics": e["summary"].replace("training_summary.json", "metrics.csv")}
                for e in self.distill_table_entries("tables") if "summary" in e]

    def distill_gold_folders(self) -> list[str]:
        return [f"data/built/distill/eval_{t}" for t in self.distill_tasks()]

    def entry_folder(self, entry: dict[str, Any], split: str) -> str:
        """The embeddings folder of a distillation-table row (``distill_table_entries``) on any document set."""
        kind = entry["kind"]
        if kind == "structural_teacher":
            return self.distill_teacher("structural", split)
        if kind == "contextual_teacher":
            return self.distill_teacher("contextual", split)
        if kind == "teachers_concatenated":
            return f"data/distill/concat/{split}"
        if kind == "untrained_student":
            return DISTILL_UNTRAINED_EMBEDDINGS.format(split=split)
        return DISTILL_STUDENT_EMBEDDINGS.format(run=entry["name"][len("student_"):], seed=entry["seed"], split=split)

    def propsegment_entries(self, seedset: str, split: str) -> list[tuple[str, Any, str]]:
        """(row, seed, embeddings folder on ``split``) of every distillation-table row of a seed set: the rows
        scored on PropSegment for the representation matrix (rules/representations.smk)."""
        return [(e["name"], e["seed"], self.entry_folder(e, split)) for e in self.distill_table_entries(seedset)]

    def stat_tables(self) -> list[dict[str, Any]]:
        """The statistics layer's tables of this work (StatTables.register's arguments): the students' table and
        the teachers' table."""
        return [{"table": "distill_table", "work": "distill",
                 "rows": list(dict.fromkeys(e["name"] for e in self.distill_table_entries())),
                 "metrics": self.distill_metrics()},
                {"table": "distill_teachers", "work": "distill",
                 "rows": [name for name, _, _ in self.teachers.distill_teachers()], "metrics": self.distill_metrics()}]
