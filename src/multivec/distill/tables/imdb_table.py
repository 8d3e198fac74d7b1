"""The IMDB table (Burian 2023, §5.1.1: the thesis's classification task), ``results/distill_imdb.{csv,md}``.

``evaluate_row`` trains the thesis's head (``multivec.distill.evaluation.classification_head``) on one row's
training embeddings of the IMDB reviews (``multivec.distill.data.imdb``) and scores test accuracy (x 100),
keeping each test review's prediction (``results/distill_imdb/<row>/<seed>.reviews.jsonl``);
``imdb_measurements`` turns those into per-review units (correct x 100, statistic ``mean``) and
``write_table`` writes ``results/distill_imdb.{csv,md}`` with CIs, comparisons and claims.
"""

from __future__ import annotations

import os
from pathlib import Path

from multivec.distill.data.imdb import SPLITS, read_labels

TABLE_COLUMNS = ("row", "kind", "model", "dimension", "imdb_accuracy", "imdb_train_accuracy", "head_final_loss",
                 "head_steps", "head_seconds", "n_train", "n_test")


def evaluate_row(name: str, kind: str, embeddings: dict[str, str | os.PathLike],
                 documents: dict[str, str | os.PathLike], head_config) -> tuple[dict, list[dict]]:
    """Train the head on ``embeddings["train"]`` with the labels of ``documents["train"]``, accuracy x 100 on
    ``test``: one row of the table (``TABLE_COLUMNS``) and each test review ``{"id", "label", "predicted"}``."""
    from multivec.distill.evaluation.classification_head import evaluate_head
    from multivec.distill.embeddings import read_embeddings, vectors_for

    data = {}
    for split in SPLITS:
        ids, labels = read_labels(documents[split])
        data[split] = (vectors_for(embeddings[split], ids), labels)
    result = evaluate_head(*data["train"], *data["test"], head_config)
    meta = read_embeddings(embeddings["test"])[2]
    test_ids, _ = read_labels(documents["test"])
    reviews = [{"id": i, "label": int(y), "predicted": int(p)}
               for i, y, p in zip(test_ids, data["test"][1], result.test_predictions)]
    row = {"row": name, "kind": kind, "model": meta.get("model", ""), "dimension": result.dimension,
           "imdb_accuracy": round(100 * result.accuracy, 4), "imdb_train_accuracy": round(100 * result.train_accuracy, 4),
           "head_final_loss": round(result.final_train_loss, 4), "head_steps": result.steps,
           "head_seconds": round(result.seconds, 1), "n_train": result.n_train, "n_test": result.n_test}
    return row, reviews


def imdb_measurements(entries: list[dict]) -> list:
    """``entries``: ``{"name", "seed" (None: deterministic), "reviews": <row>/<seed>.reviews.jsonl}`` ->
    ``Measurement``s of ``imdb_accuracy``: each test review correct x 100 (statistic ``mean``)."""
    import numpy as np

    from multivec.io import check_fields, iter_jsonl
    from multivec.statistics import Measurement

    out = []
    for entry in entries:
        reviews = []
        for number, row in iter_jsonl(entry["reviews"]):
            check_fields(row, {"id": "string", "label": "integer", "predicted": "integer"}, entry["reviews"], number)
            reviews.append(row)
        correct = [100.0 * (r["predicted"] == r["label"]) for r in reviews]
        out.append(Measurement(entry["name"], "imdb_accuracy", "mean", [r["id"] for r in reviews],
                               np.array(correct), entry.get("seed")))
    return out


def write_table(rows: list[dict], units: str | os.PathLike, comparisons: list | None, statistics: dict,
                csv_path: str | os.PathLike, md_path: str | os.PathLike, tests_path: str | os.PathLike,
                note: str = "", claims_file: str | os.PathLike | None = None, claims: dict | None = None) -> None:
    """``results/distill_imdb.{csv,md}`` and ``_tests.csv``: one row per row name (the first seed's head
    details), ``imdb_accuracy`` as the seed mean with its CI and seed SD from the per-review units; no
    ``paper_*`` columns (the thesis's results chapter is empty)."""
    import pandas as pd

    from multivec.distill.tables.statistics import (
        claim_lines,
        markdown_table,
        statistics_note,
        with_statistics,
        write_frame,
    )

    if not rows:
        raise ValueError("no IMDB rows to write")
    first: dict[str, dict] = {}
    for row in rows:
        first.setdefault(row["row"], {column: row.get(column) for column in TABLE_COLUMNS})
    frame, stats = with_statistics(pd.DataFrame(list(first.values())), "row", ["imdb_accuracy"], units,
                                   comparisons, statistics)
    write_frame(frame, csv_path)
    stats.write_tests(tests_path)
    columns = [c for c in TABLE_COLUMNS if c not in ("head_seconds", "head_steps")] + ["n_seeds"]
    lines = ["# IMDB sentiment with the thesis's head (Burian 2023, §5.1.1)", ""]
    lines += markdown_table(frame, columns, {"imdb_accuracy": 2})
    lines += ["", "IMDB sentiment (Maas et al. 2011; Burian 2023 §5.1.1): the thesis's head (Linear -> 50 -> ReLU -> "
              "Dropout 0.5 -> Linear, label smoothing 0.1, 10 epochs of 32, AdamW 1e-4, weight decay 0.1, cosine) "
              "trained on each row's frozen embeddings of the training reviews (n_train; 25k at paper scale), "
              "accuracy x 100 on the test reviews (n_test; the CI resamples them). The other columns are the "
              "first seed's." + (f" {note}" if note else ""), "",
              statistics_note(stats, statistics["confidence"], units="test reviews"),
              ""]
    tests = stats.markdown_tests()
    lines += (tests + [""]) if tests else []
    lines += claim_lines(claims_file, {"distill_imdb": units}, claims)
    Path(md_path).write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
