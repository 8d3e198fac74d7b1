"""The distillation table (Burian 2023, §5 at demo scale; the thesis's hypothesis of §3: a student trained
with both teachers beats either teacher alone).

Rows: the structural teacher alone, the contextual teacher alone, the two concatenated, the untrained
student, and the student trained with L_S only, L_C only and both (one row per trained run of the config).
Columns: every demo task's metrics from ``multivec.distill.evaluation.evaluate_embeddings`` (as
``<task>_<metric>``), each row's embedding dimension and training minutes. Every number is computed here from
the artifacts; the thesis reports no results (its results chapter is empty), so there are no ``paper_*``
columns.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from multivec.io import read_json, write_csv

ROW_KINDS = ("structural_teacher", "contextual_teacher", "teachers_concatenated", "untrained_student",
             "student")


def concatenate_embeddings(folders: Sequence[str | os.PathLike], out: str | os.PathLike) -> None:
    """One embeddings folder whose vectors are the L2-normalised vectors of ``folders`` side by side (so that
    under cosine neither teacher outweighs the other by its scale); ids must agree (order may differ)."""
    from multivec.distill.embeddings import read_embeddings, write_embeddings

    first_ids, parts, models = None, [], []
    for folder in folders:
        ids, vectors, meta = read_embeddings(folder)
        vectors = np.asarray(vectors, dtype=np.float32)
        if first_ids is None:
            first_ids = list(ids)
        else:
            index = {doc_id: row for row, doc_id in enumerate(ids)}
            missing = [d for d in first_ids if d not in index]
            if missing or len(ids) != len(first_ids):
                raise ValueError(f"{folder}: its ids differ from {folders[0]}'s "
                                 f"(e.g. {missing[0] if missing else 'an extra id'!r}); cannot concatenate")
            vectors = vectors[[index[d] for d in first_ids]]
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        parts.append(vectors / np.maximum(norms, 1e-12))
        models.append(str(meta.get("model", folder)))
    stacked = np.concatenate(parts, axis=1).astype(np.float32)
    write_embeddings(out, first_ids, stacked, {"model": " + ".join(models), "dimension": int(stacked.shape[1]),
                                               "n": len(first_ids), "truncated_share": None,
                                               "concatenated_from": [str(f) for f in folders]})


def training_minutes(summary_path: str | os.PathLike | None) -> float | None:
    if summary_path is None:
        return None
    summary = read_json(summary_path)
    if "train_minutes" not in summary:
        raise KeyError(f"{summary_path}: no 'train_minutes' (not a training summary)")
    return float(summary["train_minutes"])


def build_rows(rows: Sequence[dict[str, Any]], tasks: Sequence[str], task_files: dict[str, Any],
               evaluate: Callable[[str, str, Any], dict[str, float]] | None = None) -> list[dict[str, Any]]:
    """``rows``: ``{"name", "kind", "embeddings": {task: folder}, "summary": path | None, "loss": str}``.
    ``evaluate`` defaults to ``multivec.distill.evaluation.evaluate_embeddings``."""
    if evaluate is None:
        from multivec.distill.evaluation import evaluate_embeddings as evaluate
    from multivec.distill.embeddings import read_embeddings

    table = []
    for row in rows:
        if row["kind"] not in ROW_KINDS:
            raise ValueError(f"distill table row {row['name']!r}: kind {row['kind']!r} not one of "
                             f"{', '.join(ROW_KINDS)}")
        out: dict[str, Any] = {"row": row["name"], "kind": row["kind"], "loss": row.get("loss", "")}
        dimension = None
        for task in tasks:
            folder = row["embeddings"].get(task)
            if folder is None:
                raise KeyError(f"distill table row {row['name']!r}: no embeddings for task {task!r}")
            _, vectors, _ = read_embeddings(folder)
            if dimension is not None and vectors.shape[1] != dimension:
                raise ValueError(f"{folder}: dimension {vectors.shape[1]}, but the row's other tasks have "
                                 f"{dimension}")
            dimension = int(vectors.shape[1])
            for metric, value in evaluate(task, str(folder), task_files[task]).items():
                # metric names already carry their task (evaluation.METRICS)
                out[metric if metric.startswith(f"{task}_") else f"{task}_{metric}"] = round(float(value), 4)
        out["dimension"] = dimension
        minutes = training_minutes(row.get("summary"))
        out["train_minutes"] = "" if minutes is None else round(minutes, 2)
        table.append(out)
    return table


def hypothesis_lines(table: Sequence[dict[str, Any]]) -> list[str]:
    """Whether the student trained with both teachers beats each teacher alone, metric by metric."""
    metrics = [k for k in table[0] if k not in ("row", "kind", "loss", "dimension", "train_minutes")]
    teachers = {r["kind"]: r for r in table if r["kind"] in ("structural_teacher", "contextual_teacher")}
    both = [r for r in table if r["kind"] == "student" and "+" in str(r.get("loss", ""))]
    lines = []
    for student in both:
        for kind, teacher in teachers.items():
            wins = [m for m in metrics if student[m] > teacher[m]]
            lines.append(f"- `{student['row']}` beats the {kind.replace('_', ' ')} (`{teacher['row']}`) on "
                         f"{len(wins)} of {len(metrics)} metrics" + (f" ({', '.join(wins)})" if wins else ""))
        beats_all = all(all(student[m] > t[m] for m in metrics) for t in teachers.values())
        lines.append(f"- hypothesis (beats either teacher alone on every metric) for `{student['row']}`: "
                     f"**{'yes' if beats_all else 'no'}**")
    return lines


def write_table(table: Sequence[dict[str, Any]], csv_path: str | os.PathLike, md_path: str | os.PathLike,
                note: str = "") -> None:
    if not table:
        raise ValueError("distill table: no rows")
    write_csv(csv_path, list(table))
    columns = list(table[0])
    lines = ["# Document embedding by distillation (Burian 2023): teachers and students, demo tasks", ""]
    if note:
        lines += [note, ""]
    lines += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(r.get(c, "")) for c in columns) + " |" for r in table]
    lines += ["", "Does the student trained with both teachers beat either teacher alone?", ""]
    lines += hypothesis_lines(table) or ["- no student trained with both losses in this run"]
    Path(md_path).write_text("\n".join(lines) + "\n")
