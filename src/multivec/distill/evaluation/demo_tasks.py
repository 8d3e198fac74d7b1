"""Evaluation of document embeddings for the distillation work (Burian 2023, §5), demo tasks:

- ``lee``: Lee et al. (2005) document similarity — Pearson and Spearman correlation between the
  cosine of the 50 documents' embeddings and the human ratings, over the 1,225 pairs of the upper
  triangle of ``similarities.txt``;
- ``polarity``: movie-review polarity (200 labelled sentences) — accuracy x 100 of a logistic
  regression on the frozen embeddings, each sentence predicted by the model of the stratified 5-fold
  cross-validation (a fixed fold seed) that did not train on it;
- ``pi`` / ``rr``: NUGGET's ranking tasks with one vector per document — cosine between the query's
  and each candidate's embedding, MRR x 100 (ranks by ``multivec.metrics.ranking``, pessimistic ties: the
  same scoring as Table 2).

``evaluate_units(task_name, embeddings_folder, task_files)`` scores every evaluation unit: a Lee
document pair ``"lee_03|lee_17"`` (its cosine and human rating; statistics ``pearson`` and
``spearman``), a polarity sentence (its out-of-fold prediction correct, x 100; ``mean``) or a ranking
query (100 / the answer's rank; ``mean``), as ``UnitScores`` per metric. ``evaluate_embeddings``
gives the named floats the tables show, computed from those units (so the CIs and tests of
``multivec.statistics`` are computed from exactly what the table reports). ``task_files`` is
``{"task": <gold folder>}`` (``task_files(task)`` gives the DAG's paths) or ``{"documents":
<eval_<task>.jsonl>}`` (the gold folder is beside it, without ``.jsonl``).
The thesis's paper-scale head (Linear-50-ReLU-Dropout-Linear on IMDB) is not part of the demo.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from multivec.distill.embeddings import vectors_for
from multivec.data.document_task_gold import read_gold
from multivec.evaluation.document_tasks import (POLARITY_FOLDS, UnitScores, cosine_similarities, lee_units,
                                                 polarity_units, unit_rows)

TASKS = ("lee", "polarity", "pi", "rr")
METRICS = {"lee": ("lee_pearson", "lee_spearman"), "polarity": ("polarity_accuracy",),
           "pi": ("pi_mrr",), "rr": ("rr_mrr",)}
__all__ = ["TASKS", "METRICS", "UnitScores", "evaluate_units", "evaluate_embeddings", "paired_comparison",
           "lee_correlations", "polarity_accuracy", "ranking_units", "ranking_mrr", "task_files"]


def paired_comparison(scores: UnitScores, reference: UnitScores) -> dict[str, float]:
    """``scores`` against ``reference`` on the same units (one run each): both values, the difference, its 95%
    paired bootstrap CI and the randomization p (``multivec.statistics.paired_difference``), to 4 places."""
    from multivec.statistics import Measurement
    from multivec.statistics.resampling import paired_difference
    from multivec.statistics.units import stack_seeds

    stacks = stack_seeds([Measurement(name, "metric", s.statistic, s.units, s.values, None)
                          for name, s in (("a", scores), ("b", reference))])
    d = paired_difference(stacks[("a", "metric")], stacks[("b", "metric")])
    return {"value": round(scores.value(), 4), "against_value": round(reference.value(), 4),
            "difference": round(d.difference, 4), "lo": round(d.lo, 4), "hi": round(d.hi, 4), "p": round(d.p, 4)}


def task_files(task: str, root: str = "data/built/distill") -> dict[str, str]:
    """The DAG's gold folder of an evaluation task (built by ``distill_eval_task``)."""
    if task not in TASKS:
        raise ValueError(f"unknown distillation evaluation task {task!r}; known: {', '.join(TASKS)}")
    return {"task": f"{root}/eval_{task}"}


def lee_correlations(vectors: np.ndarray, ratings: np.ndarray) -> dict[str, float]:
    ids = [f"lee_{n:02d}" for n in range(len(ratings))]
    return {metric: scores.value() for metric, scores in lee_units(cosine_similarities(vectors), ratings, ids).items()}


def polarity_accuracy(vectors: np.ndarray, labels: np.ndarray, folds: int = POLARITY_FOLDS) -> dict[str, float]:
    """Out-of-fold accuracy x 100 (with equal folds, the mean of the folds' accuracies)."""
    ids = [str(n) for n in range(len(labels))]
    return {metric: scores.value() for metric, scores in polarity_units(vectors, labels, ids, folds).items()}


def ranking_units(task_name: str, folder: str | os.PathLike, gold: str | os.PathLike) -> dict[str, UnitScores]:
    """A ranking task per query: 100 / the answer's rank among the query's candidates by cosine (ties
    pessimistic, ``multivec.metrics.ranking.ranks_of_answers``), whose mean is MRR x 100. A query's unit is
    its position and source document (``ranking_task.query_unit_id``, as Table 2's)."""
    from multivec.metrics.ranking import ranks_of_answers
    from multivec.tasks.ranking_task import RankingTask, query_unit_id

    task = RankingTask.load(gold)
    sources = [q.source for q in task.queries]
    candidates = np.array([q.candidates for q in task.queries])
    source_vectors = unit_rows(vectors_for(folder, sources))
    candidate_vectors = unit_rows(vectors_for(folder, list(candidates.ravel()))).reshape(*candidates.shape, -1)
    scores = np.einsum("qd,qcd->qc", source_vectors, candidate_vectors)
    ranks = ranks_of_answers(scores, [q.answer for q in task.queries])
    units = [query_unit_id(k, s) for k, s in enumerate(sources)]
    reciprocal = 100.0 / ranks  # not 100 * reciprocal_ranks: 100 * (1 / r) rounds differently for r = 3, 6, 7, ...
    return {f"{task_name}_mrr": UnitScores("mean", units, reciprocal)}


def ranking_mrr(task_name: str, folder: str | os.PathLike, gold: str | os.PathLike) -> dict[str, float]:
    return {metric: scores.value() for metric, scores in ranking_units(task_name, folder, gold).items()}


def evaluate_units(task_name: str, embeddings_folder: str | os.PathLike,
                   task_files: dict[str, str]) -> dict[str, UnitScores]:
    """Per-unit scores of the embeddings in ``embeddings_folder`` on one demo task (module docstring)."""
    if task_name not in TASKS:
        raise ValueError(f"unknown distillation evaluation task {task_name!r}; known: {', '.join(TASKS)}")
    if "task" in task_files:
        gold = Path(task_files["task"])
    elif str(task_files.get("documents", "")).endswith(".jsonl"):  # eval_<task>.jsonl -> its gold folder eval_<task>/
        gold = Path(str(task_files["documents"])[:-len(".jsonl")])
    else:
        raise KeyError(f"task_files for {task_name!r} needs key 'task' (the gold folder) or 'documents' "
                       f"(eval_<task>.jsonl beside it), got {sorted(task_files)}")
    if task_name == "lee":
        ids, ratings = read_gold("lee", gold)
        return lee_units(cosine_similarities(vectors_for(embeddings_folder, ids)), ratings, ids)
    if task_name == "polarity":
        ids, labels = read_gold("polarity", gold)
        return polarity_units(vectors_for(embeddings_folder, ids), labels, ids)
    return ranking_units(task_name, embeddings_folder, gold)


def evaluate_embeddings(task_name: str, embeddings_folder: str | os.PathLike,
                        task_files: dict[str, str]) -> dict[str, float]:
    """The task's metrics (``METRICS``) of the embeddings, each the statistic of its per-unit scores."""
    return {metric: scores.value()
            for metric, scores in evaluate_units(task_name, embeddings_folder, task_files).items()}
