"""The distillation work (Burian 2023), its teachers (rules/distill_teachers.smk): config look-ups, document
sets, the teachers' embeddings folders, the evaluation tasks' inputs and the overlap-audit entries (formerly
rules/distill_teachers_common.smk). The student's rules (rules/distill.smk) read the chosen teachers'
embeddings through ``structural_teacher_dir(split)`` and ``contextual_teacher_dir(split)``.

The rule files build one ``DistillTeachers`` from the config (rules/distill_teachers_common.smk).
"""

from __future__ import annotations

from typing import Any, Mapping

from multivec.rules.paths import GENSIM_ENWIKI, TASKS, raw, task_dir

MPNET_MODEL = "data/raw/all_mpnet_base_v2/model/modules.json"
PV_MODEL = "models/paragraph_vector/{variant}"  # a saved variant, trained once (rule paragraph_vector_model)
# The Paragraph Vector corpora by name (distill.contextual_teacher.variants[i].corpus).
DISTILL_GENSIM = {
    "lee_background": "data/raw/gensim/lee_background.cor",
    "gensim_enwiki": GENSIM_ENWIKI,
    "debian_reference": raw("debian_reference", "pairs.jsonl"),
    # paper scale: WikiText-103's training articles (the Wikipedia half of the thesis's corpus; docs/distill.md)
    "wikitext103": "data/extracted/wikitext103_raw/wikitext-103-raw/wiki.train.raw",
}


def distill_documents(split: str) -> str:
    return f"data/built/distill/{split}.jsonl"


def distill_teacher_dir(kind: str, name: str, split: str) -> str:
    """Embeddings folder of a teacher on a document set: kind 'sbert' (model name) or 'pv' (variant)."""
    return f"data/distill/teachers/{kind}_{name}/{split}"


def distill_eval_inputs(task: str) -> dict[str, str]:
    """What evaluating on a task reads: Lee's documents and similarities, the polarity corpus, or a ranking task."""
    if task == "lee":
        return {"documents": "data/raw/gensim/lee.cor", "similarities": "data/raw/gensim/similarities0-1.txt"}
    if task == "polarity":
        return {"documents": "data/raw/gensim/pang_lee_polarity.cor"}
    return {"docs": f"{task_dir(task)}/docs.txt", "task": f"{task_dir(task)}/task.jsonl"}


class DistillTeachers:
    """The config's ``distill`` section as the teachers' rules read it. The chosen teachers are among the listed
    ones and the variant names unique: checked with the config (multivec.config)."""

    def __init__(self, config: Mapping[str, Any]):
        self.distill = config["distill"]
        self.tasks = self.distill["evaluation"]["tasks"]
        self.splits = ["train"] + [f"eval_{t}" for t in self.tasks]
        self.sbert_models = self.distill["structural_teacher"]["models"]
        self.pv_variants = {v["name"]: v for v in self.distill["contextual_teacher"]["variants"]}

    # The teachers the student learns from (distill.structural_teacher.teacher / contextual_teacher.teacher).
    def structural_teacher_dir(self, split: str) -> str:
        return distill_teacher_dir("sbert", self.distill["structural_teacher"]["teacher"], split)

    def contextual_teacher_dir(self, split: str) -> str:
        return distill_teacher_dir("pv", self.distill["contextual_teacher"]["teacher"], split)

    def distill_teachers(self) -> list[tuple[str, str, dict[str, str]]]:
        """(row name, kind, {split: embeddings folder}) for every teacher in the table."""
        rows = [(f"sbert_{m}", "structural", {s: distill_teacher_dir("sbert", m, s) for s in self.splits})
                for m in self.sbert_models]
        rows += [(f"pv_{v}", "contextual", {s: distill_teacher_dir("pv", v, s) for s in self.splits})
                 for v in self.pv_variants]
        return rows

    def committed_teachers(self) -> list[tuple[str, str, dict[str, str]]]:
        """``distill_teachers`` with each embeddings folder replaced by the folder of its committed ``meta.json``
        (``multivec.io.committed_inputs``): what the teachers' table reads."""
        from multivec.io.committed_inputs import committed_folder

        return [(name, kind, {split: committed_folder(folder) for split, folder in folders.items()})
                for name, kind, folders in self.distill_teachers()]

    def committed_teacher_metas(self) -> list[str]:
        """The committed copy of every teacher embeddings folder's ``meta.json`` (the teachers' table's inputs)."""
        from multivec.io.committed_inputs import committed_input

        return [committed_input(f"{folder}/meta.json") for _, _, folders in self.distill_teachers()
                for folder in folders.values()]

    def teacher_unit_entries(self) -> list:
        """The teachers as entries of their unit file (seed None: deterministic given the config seed)."""
        from multivec.distill.tables.teacher_table import teacher_entries

        return teacher_entries(self.distill_teachers(), self.tasks)

    def audit_entries(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """(corpora, tasks) for the overlap audit: the student's training documents against each evaluation
        task's (PI and RR, Table 2's tasks, are audited whole)."""
        corpora = {"distill_train": {"format": "text_jsonl", "files": [distill_documents("train")]}}
        tasks = {f"distill_{task}": {"format": "text_jsonl", "files": [distill_documents(f"eval_{task}")]}
                 for task in self.tasks if task not in TASKS}
        return corpora, tasks
