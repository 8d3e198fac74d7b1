"""The teacher selection table (Burian 2023, §3.2: the grid the thesis uses to choose its structural
and contextual teachers): every SBERT teacher and every Paragraph Vector variant scored on every
demo evaluation task (``multivec.distill.evaluation``), with its dimension, the truncation share of
its training documents and the minutes it took to embed them.

The thesis's results chapter is empty, so there are no ``paper_*`` columns; the orientation values
quoted in the issue are for checking by eye only.
"""

from __future__ import annotations

import os
from pathlib import Path

from multivec.distill.embeddings import read_embeddings
from multivec.distill.evaluation import METRICS, evaluate_embeddings, task_files

COLUMNS = ("teacher", "kind", "model", "dimension", "lee_pearson", "lee_spearman", "polarity_accuracy",
           "pi_mrr", "rr_mrr", "train_truncated_share", "train_documents", "embed_minutes")


def teacher_row(name: str, kind: str, folders: dict[str, str], tasks: list[str],
                gold_root: str = "data/built/distill") -> dict:
    """One row: ``folders`` maps ``train`` and ``eval_<task>`` to embeddings folders of this teacher."""
    _, _, train_meta = read_embeddings(folders["train"])
    row = {"teacher": name, "kind": kind, "model": train_meta.get("model", ""),
           "dimension": train_meta["dimension"], "train_truncated_share": train_meta.get("truncated_share"),
           "train_documents": train_meta["n"]}
    minutes = float(train_meta.get("seconds", 0.0))
    for task in tasks:
        folder = folders[f"eval_{task}"]
        minutes += float(read_embeddings(folder)[2].get("seconds", 0.0))
        scores = evaluate_embeddings(task, folder, task_files(task, gold_root))
        row.update({key: round(value, 4) for key, value in scores.items()})
    row["embed_minutes"] = round(minutes / 60.0, 2)
    for task in set(METRICS) - set(tasks):
        row.update({key: None for key in METRICS[task]})
    return {column: row.get(column) for column in COLUMNS}


def to_markdown(rows: list[dict]) -> str:
    def cell(value):
        if value is None:
            return "–"
        return f"{value:.3f}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(cell(row[c]) for c in COLUMNS) + " |" for row in rows]
    note = ("Teachers of the distillation work (Burian 2023, §3.2) on the demo tasks: Lee document similarity "
            "(Pearson/Spearman of cosine vs. human ratings), polarity (5-fold logistic regression accuracy), "
            "PI/RR (single-vector cosine, MRR x 100). Paragraph Vector is trained on the distillation training "
            "documents only; evaluation documents get infer_vector. train_truncated_share: training documents "
            "longer than the SBERT teacher's token limit.")
    return "\n".join(lines) + "\n\n" + note + "\n"


def write_table(rows: list[dict], csv_path: str | os.PathLike, md_path: str | os.PathLike) -> None:
    from multivec.io import write_csv

    if not rows:
        raise ValueError("no teacher rows to write")
    write_csv(csv_path, rows)
    Path(md_path).write_text(to_markdown(rows), encoding="utf-8")
