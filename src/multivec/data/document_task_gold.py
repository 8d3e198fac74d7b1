"""The gold of the document tasks every representation is scored on (shared by the works,
``multivec.evaluation.document_tasks``): Lee et al. (2005)'s human similarity ratings of 50 documents and the
polarity sentences' labels, as the distillation work's ``eval_<task>/`` gold folders hold them
(``multivec.distill.data.documents.build_eval_task`` writes them)."""

from __future__ import annotations

import os
from pathlib import Path

from multivec.io import MalformedInputError, iter_lines

LEE_SIZE = 50
DOCUMENT_TASKS = ("lee", "polarity")


def read_lee_similarities(path: str | os.PathLike):
    """The 50x50 matrix of human similarity ratings (gensim's ``similarities0-1.txt``)."""
    import numpy as np

    rows = []
    for number, line in iter_lines(path):
        if not line.strip():
            continue
        try:
            values = [float(x) for x in line.split()]
        except ValueError:
            raise MalformedInputError(path, number, "expected tab-separated numbers") from None
        if len(values) != LEE_SIZE:
            raise MalformedInputError(path, number, f"expected {LEE_SIZE} ratings, found {len(values)}")
        bad = [v for v in values if not 0.0 <= v <= 1.0]  # also catches nan
        if bad:
            raise MalformedInputError(path, number, f"ratings must lie in [0, 1], found {bad[0]}")
        rows.append(values)
    if len(rows) != LEE_SIZE:
        raise MalformedInputError(path, None, f"expected a {LEE_SIZE}x{LEE_SIZE} matrix, found {len(rows)} rows")
    return np.array(rows)



def read_gold(task: str, gold: str | os.PathLike):
    """A document task's unit documents and gold, from its gold folder: Lee's 50 ids ``lee_NN`` and its (50, 50)
    ratings (``similarities.txt``), or the polarity sentences' ids and labels (``labels.jsonl``)."""
    import numpy as np

    from multivec.io import read_jsonl

    gold = Path(gold)
    if task == "lee":
        ratings = read_lee_similarities(gold / "similarities.txt")
        return [f"lee_{n:02d}" for n in range(len(ratings))], ratings
    if task == "polarity":
        rows = read_jsonl(gold / "labels.jsonl")
        return [r["id"] for r in rows], np.array([r["label"] for r in rows])
    raise ValueError(f"unknown document task {task!r}; known: {', '.join(DOCUMENT_TASKS)}")
