"""Evaluation of document embeddings for the distillation work (Burian 2023, §5), demo tasks:

- ``lee``: Lee et al. (2005) document similarity — Pearson and Spearman correlation between the
  cosine of the 50 documents' embeddings and the human ratings, over the 1,225 pairs of the upper
  triangle of ``similarities.txt``;
- ``polarity``: movie-review polarity (200 labelled sentences) — accuracy of a logistic regression
  on the frozen embeddings, stratified 5-fold cross-validation (a fixed fold seed);
- ``pi`` / ``rr``: NUGGET's ranking tasks with one vector per document — cosine between the query's
  and each candidate's embedding, MRR x 100 (``multivec.evaluation.ranking_evaluation``, the same
  scoring as Table 2).

``evaluate_embeddings(task_name, embeddings_folder, task_files)`` takes ``task_files =
{"task": <gold folder>}`` (``task_files(task)`` gives the DAG's paths) or ``{"documents":
<eval_<task>.jsonl>}`` (the gold folder is beside it, without ``.jsonl``) and returns named floats.
The thesis's paper-scale head (Linear-50-ReLU-Dropout-Linear on IMDB) is not part of the demo.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from multivec.distill.embeddings import vectors_for

TASKS = ("lee", "polarity", "pi", "rr")
POLARITY_FOLDS = 5
FOLD_SEED = 0
METRICS = {"lee": ("lee_pearson", "lee_spearman"), "polarity": ("polarity_accuracy",),
           "pi": ("pi_mrr",), "rr": ("rr_mrr",)}


def task_files(task: str, root: str = "data/built/distill") -> dict[str, str]:
    """The DAG's gold folder of an evaluation task (built by ``distill_eval_task``)."""
    if task not in TASKS:
        raise ValueError(f"unknown distillation evaluation task {task!r}; known: {', '.join(TASKS)}")
    return {"task": f"{root}/eval_{task}"}


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def lee_correlations(vectors: np.ndarray, ratings: np.ndarray) -> dict[str, float]:
    from scipy.stats import pearsonr, spearmanr

    unit = _unit(vectors)
    cosine = unit @ unit.T
    upper = np.triu_indices(len(ratings), k=1)
    return {"lee_pearson": float(pearsonr(cosine[upper], ratings[upper])[0]),
            "lee_spearman": float(spearmanr(cosine[upper], ratings[upper])[0])}


def polarity_accuracy(vectors: np.ndarray, labels: np.ndarray, folds: int = POLARITY_FOLDS) -> dict[str, float]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    classifier = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    splits = StratifiedKFold(n_splits=folds, shuffle=True, random_state=FOLD_SEED)
    scores = cross_val_score(classifier, vectors, labels, cv=splits)
    return {"polarity_accuracy": float(scores.mean())}


def ranking_mrr(task_name: str, folder: str | os.PathLike, gold: str | os.PathLike) -> dict[str, float]:
    from multivec.evaluation.ranking_evaluation import result_from_scores
    from multivec.tasks.ranking_task import RankingTask

    task = RankingTask.load(gold)
    sources = [q.source for q in task.queries]
    candidates = np.array([q.candidates for q in task.queries])
    source_vectors = _unit(vectors_for(folder, sources))
    candidate_vectors = _unit(vectors_for(folder, list(candidates.ravel()))).reshape(*candidates.shape, -1)
    scores = np.einsum("qd,qcd->qc", source_vectors, candidate_vectors)
    return {f"{task_name}_mrr": result_from_scores(task, scores, "single_vector_cosine").mrr}


def evaluate_embeddings(task_name: str, embeddings_folder: str | os.PathLike,
                        task_files: dict[str, str]) -> dict[str, float]:
    """Scores of the embeddings in ``embeddings_folder`` on one demo task (see the module docstring)."""
    from multivec.distill.documents import read_lee_similarities
    from multivec.io import read_jsonl

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
        ratings = read_lee_similarities(gold / "similarities.txt")
        vectors = vectors_for(embeddings_folder, [f"lee_{n:02d}" for n in range(len(ratings))])
        return lee_correlations(vectors, ratings)
    if task_name == "polarity":
        rows = read_jsonl(gold / "labels.jsonl")
        vectors = vectors_for(embeddings_folder, [r["id"] for r in rows])
        return polarity_accuracy(vectors, np.array([r["label"] for r in rows]))
    return ranking_mrr(task_name, embeddings_folder, gold)
