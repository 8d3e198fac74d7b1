"""IMDB sentiment (Maas et al. 2011), the distillation thesis's classification task (Burian 2023,
§5.1.1): 25,000 training and 25,000 test reviews, each labelled positive or negative (12,500 each).

``read_imdb(archive)`` reads the official ``aclImdb_v1.tar.gz`` (registered as the ``imdb`` source
in ``multivec.data.sources``) without extracting it: members
``aclImdb/{train,test}/{pos,neg}/<n>_<rating>.txt`` become rows ``{"id", "text", "label"}`` with
id ``imdb_<split>_<pos|neg>_<n>``, label 1 = pos, 0 = neg; ``train/unsup`` (unlabelled reviews) and
every other member are skipped. The text is kept as released (its ``<br />`` line breaks included,
as the Hugging Face ``imdb`` copy the thesis's code reads has them). Rows are ordered by
(label, n), so the output never depends on the archive's member order.

``check_counts`` fails with the archive's name when a split or label does not have the expected
number of reviews (a truncated or different archive). ``write_splits`` writes each split as a
distillation document set with labels (``data/built/distill/eval_imdb_{train,test}.jsonl``), so every
teacher and student rule embeds it; ``evaluate_row`` trains the thesis's head
(``multivec.distill.classification_head``) on one row's training embeddings and scores test accuracy
(x 100), keeping each test review's prediction (``results/distill_imdb/<row>/<seed>.reviews.jsonl``);
``imdb_measurements`` turns those into per-review units (correct x 100, statistic ``mean``) and
``write_table`` writes ``results/distill_imdb.{csv,md}`` with CIs, comparisons and claims.
"""

from __future__ import annotations

import os
import re
import tarfile
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from multivec.data.language import LanguageCheck
from multivec.io import MalformedInputError

if TYPE_CHECKING:  # for the annotations; the functions import numpy where they use it
    import numpy as np

SPLITS = ("train", "test")
LABELS = {"neg": 0, "pos": 1}
_MEMBER = re.compile(r"^(?:\./)?aclImdb/(train|test)/(pos|neg)/(\d+)_(\d+)\.txt$")


def read_imdb(archive: str | os.PathLike) -> dict[str, list[dict]]:
    """``{"train": rows, "test": rows}`` of the labelled reviews in ``archive`` (see the module docstring)."""
    archive = Path(archive)
    if not archive.is_file():
        raise FileNotFoundError(f"{archive}: no such file (the IMDB archive aclImdb_v1.tar.gz)")
    found: dict[str, list[tuple[int, int, dict]]] = {split: [] for split in SPLITS}
    languages = {split: LanguageCheck(archive, "en", f"IMDB {split} reviews") for split in SPLITS}
    try:
        with tarfile.open(archive, "r:*") as tar:
            for member in tar:
                match = _MEMBER.match(member.name)
                if not match or not member.isfile():
                    continue
                split, polarity, number, rating = match.groups()
                handle = tar.extractfile(member)
                try:
                    text = handle.read().decode("utf-8")
                except UnicodeDecodeError as err:
                    raise MalformedInputError(archive, None, f"member {member.name}: not UTF-8 ({err})") from None
                if not text.strip():
                    raise MalformedInputError(archive, None, f"member {member.name}: empty review")
                languages[split].add(text, member.name)
                label = LABELS[polarity]
                row = {"id": f"imdb_{split}_{polarity}_{number}", "text": text.strip(), "label": label,
                       "rating": int(rating)}
                found[split].append((label, int(number), row))
    except (tarfile.TarError, EOFError, OSError) as err:
        raise MalformedInputError(archive, None, f"not a readable tar archive ({err})") from None
    for check in languages.values():
        check.finish()
    out = {}
    for split, rows in found.items():
        rows.sort(key=lambda item: item[:2])
        ids = [row["id"] for _, _, row in rows]
        if len(set(ids)) != len(ids):
            duplicate = next(i for i, n in Counter(ids).items() if n > 1)
            raise MalformedInputError(archive, None, f"review {duplicate} occurs twice")
        out[split] = [row for _, _, row in rows]
    return out


def check_counts(splits: dict[str, list[dict]], per_split: int | None, archive: str | os.PathLike = "") -> dict:
    """``{split: {"reviews", "pos", "neg"}}``; raises when a split does not hold ``per_split`` reviews,
    half of them positive (``per_split`` None: only that no split or label is empty)."""
    counts = {}
    for split in SPLITS:
        rows = splits.get(split, [])
        by_label = Counter(row["label"] for row in rows)
        counts[split] = {"reviews": len(rows), "pos": by_label[1], "neg": by_label[0]}
        if per_split is None:
            if not by_label[0] or not by_label[1]:
                raise MalformedInputError(archive, None, f"IMDB {split}: no {'neg' if not by_label[0] else 'pos'} "
                                                         f"reviews ({counts[split]})")
        elif counts[split] != {"reviews": per_split, "pos": per_split // 2, "neg": per_split - per_split // 2}:
            raise MalformedInputError(archive, None, f"IMDB {split}: expected {per_split} reviews, half positive; "
                                                     f"found {counts[split]}")
    return counts


# ---- the IMDB evaluation of one embeddings row and the paper-scale table (results/distill_imdb.{csv,md})

TABLE_COLUMNS = ("row", "kind", "model", "dimension", "imdb_accuracy", "imdb_train_accuracy", "head_final_loss",
                 "head_steps", "head_seconds", "n_train", "n_test")


def write_splits(splits: dict[str, list[dict]], paths: dict[str, str | os.PathLike]) -> None:
    """Each split's rows ``{"id", "text", "label"}`` to its JSONL path (the distillation's document format
    plus the label, so every embedding rule reads it as a document set)."""
    from multivec.io import write_jsonl

    for split in SPLITS:
        write_jsonl(paths[split], [{"id": r["id"], "text": r["text"], "label": r["label"]} for r in splits[split]])


def read_labels(path: str | os.PathLike) -> tuple[list[str], "np.ndarray"]:
    """``(ids, labels)`` of an IMDB split file written by ``write_splits``: string ids, each once, and
    integer labels 0 or 1 (``true`` is not 1); errors name file:line."""
    import numpy as np

    from multivec.io import FirstSeen, iter_jsonl

    ids, labels, seen = [], [], FirstSeen(path, "review id")
    for number, row in iter_jsonl(path):
        label = row.get("label")
        if not isinstance(row.get("id"), str) or type(label) is not int or label not in (0, 1):
            raise MalformedInputError(path, number, f"each row needs a string 'id' and a 'label' 0 or 1 (an integer), "
                                                    f"got id {row.get('id')!r}, label {label!r}")
        seen.add(row["id"], number)
        ids.append(row["id"])
        labels.append(row["label"])
    if not ids:
        raise MalformedInputError(path, None, "no reviews")
    return ids, np.array(labels, dtype=np.int64)


def evaluate_row(name: str, kind: str, embeddings: dict[str, str | os.PathLike],
                 documents: dict[str, str | os.PathLike], head_config) -> tuple[dict, list[dict]]:
    """Train the head on ``embeddings["train"]`` with the labels of ``documents["train"]``, accuracy x 100 on
    ``test``: one row of the table (``TABLE_COLUMNS``) and each test review ``{"id", "label", "predicted"}``."""
    from multivec.distill.classification_head import evaluate_head
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

    from multivec.distill.table_statistics import (
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
