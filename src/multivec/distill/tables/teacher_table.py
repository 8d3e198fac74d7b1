"""The teacher selection table (Burian 2023, §3.2: the grid the thesis uses to choose its structural
and contextual teachers): every SBERT teacher and every Paragraph Vector variant scored on every
demo evaluation task (``multivec.distill.evaluation.demo_tasks``), with its dimension, the truncation share of
its training documents and the minutes it took to embed them. Every metric comes from the per-unit
scores (``teacher_measurements`` -> ``results/units/distill_teachers.<seedset>.parquet``) with
its bootstrap CI (``multivec.distill.tables.statistics``); the teachers are deterministic (seed None).

The thesis's results chapter is empty, so there are no ``paper_*`` columns; orientation values from outside
the thesis are for checking by eye only and are not part of the table.
"""

from __future__ import annotations

import os
from pathlib import Path

from multivec.distill.embeddings import read_meta
from multivec.distill.evaluation.demo_tasks import METRICS

COLUMNS = ("teacher", "kind", "model", "dimension", "lee_pearson", "lee_spearman", "polarity_accuracy",
           "pi_mrr", "rr_mrr", "train_truncated_share", "train_documents", "embed_minutes")


def teacher_entries(teachers: list, tasks: list[str]) -> list[dict]:
    """``(name, kind, {split: folder})`` teachers as unit entries (``statistics.embedding_measurements``)."""
    return [{"name": name, "seed": None, "embeddings": {task: folders[f"eval_{task}"] for task in tasks}}
            for name, _, folders in teachers]


def teacher_row(name: str, kind: str, folders: dict[str, str], tasks: list[str]) -> dict:
    """One row: ``folders`` maps ``train`` and ``eval_<task>`` to embeddings folders of this teacher; the
    metrics are left empty for ``write_table`` to fill from the unit file. Reads each folder's ``meta.json``
    only (``read_meta``: a committed copy will do)."""
    train_meta = read_meta(folders["train"])
    row = {"teacher": name, "kind": kind, "model": train_meta.get("model", ""),
           "dimension": train_meta["dimension"], "train_truncated_share": train_meta.get("truncated_share"),
           "train_documents": train_meta["n"]}
    minutes = float(train_meta.get("seconds", 0.0))
    for task in tasks:
        folder = folders[f"eval_{task}"]
        minutes += float(read_meta(folder).get("seconds", 0.0))
    row["embed_minutes"] = round(minutes / 60.0, 2)
    return {column: row.get(column, float("nan")) for column in COLUMNS}


def write_table(rows: list[dict], tasks: list[str], units: str | os.PathLike, comparisons: list | None,
                statistics: dict, csv_path: str | os.PathLike, md_path: str | os.PathLike,
                tests_path: str | os.PathLike, claims_file: str | os.PathLike | None = None,
                claims: dict | None = None) -> None:
    """``results/distill_teachers.{csv,md}`` and ``_tests.csv``: ``rows`` (``teacher_row``) with every task
    metric from the unit file (CI columns beside it), the declared comparisons and the claims on this table."""
    import pandas as pd

    from multivec.distill.tables.statistics import (
        claim_lines,
        markdown_table,
        statistics_note,
        with_statistics,
        write_frame,
    )

    if not rows:
        raise ValueError("no teacher rows to write")
    metrics = [metric for task in tasks for metric in METRICS[task]]
    frame, stats = with_statistics(pd.DataFrame(rows), "teacher", metrics, units, comparisons, statistics)
    write_frame(frame, csv_path)
    stats.write_tests(tests_path)
    digits = {m: 3 if m.startswith("lee_") else 2 for m in metrics}
    every_metric = {m for names in METRICS.values() for m in names}
    shown = [c for c in COLUMNS if c in metrics or c not in every_metric]  # the tasks of this run
    lines = ["# Distillation teachers (Burian 2023, §3.2) on the demo tasks", ""]
    lines += markdown_table(frame, shown, digits)
    lines += ["", "Teachers of the distillation work (Burian 2023, §3.2) on the demo tasks: Lee document similarity "
              "(Pearson/Spearman of cosine vs. human ratings), polarity (accuracy x 100 of out-of-fold 5-fold "
              "logistic regression predictions), PI/RR (single-vector cosine, MRR x 100). Paragraph Vector is "
              "trained on the distillation training documents only; evaluation documents get infer_vector. "
              "train_truncated_share: training documents longer than the SBERT teacher's token limit.", "",
              statistics_note(stats, statistics["confidence"]), ""]
    tests = stats.markdown_tests()
    lines += (tests + [""]) if tests else []
    lines += claim_lines(claims_file, {"distill_teachers": units}, claims)
    Path(md_path).write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
