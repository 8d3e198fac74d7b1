"""Scoring a ranking task's candidates and MRR×100: Table 2's evaluation (NUGGET §6.1), shared by NUGGET's
Tables 2 and 4 (``multivec.nugget.tables``) and the distillation work (``multivec.distill.evaluation.demo_tasks``).

Each query's 20 candidates are scored against its source document, with
- ``maxsim_mean`` (eq. 10) on multi-vector encodings (NUGGET nuggets, ColBART token states),
- ``cosine`` on single-vector encodings (TSDAE, mean pooling),
- or BM25 (``evaluate_with_bm25``; idf over the task's candidate documents),
and ranked; the answer's rank uses pessimistic ties (``multivec.metrics.ranking``).
The per-query rankings (which candidate won, where the answer came) are kept in
``RankingResult.rankings`` and written as JSONL by ``write_rankings``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from tqdm.auto import tqdm

from multivec.encodings import Encodings
from multivec.io import write_jsonl
from multivec.metrics.ranking import mrr_at, ranks_of_answers
from multivec.retrieval.bm25 import BM25Index
from multivec.tasks.ranking_task import RankingTask

SIMILARITIES = ("maxsim_mean", "cosine")


@dataclass
class RankingResult:
    mrr: float  # ×100
    n_queries: int
    method: str
    rankings: list[dict[str, Any]] = field(default_factory=list)

    def write_rankings(self, path: str | os.PathLike) -> int:
        """One JSON row a query: source, candidates, scores, answer, predicted, rank_of_answer."""
        return write_jsonl(path, self.rankings)

    def summary(self) -> dict[str, Any]:
        return {"method": self.method, "mrr": self.mrr, "n_queries": self.n_queries}


def result_from_scores(task: RankingTask, scores: np.ndarray, method: str) -> RankingResult:
    """Rank every query's candidates by ``scores`` (n_queries × n_candidates) into a RankingResult."""
    answers = np.array([q.answer for q in task.queries])
    ranks = ranks_of_answers(scores, answers)
    rows = []
    for query, row, rank in zip(task.queries, scores, ranks):
        best = np.flatnonzero(row == row.max())
        others = best[best != query.answer]  # pessimistic, as for the rank: a tie goes against the answer
        predicted = int(others[0]) if len(others) else int(best[0])
        rows.append({"source": query.source, "candidates": list(query.candidates),
                     "scores": [float(s) for s in row], "answer": int(query.answer),
                     "predicted": predicted, "rank_of_answer": int(rank)})
    return RankingResult(mrr_at(scores, answers), len(task.queries), method, rows)


def _candidate_matrix(task: RankingTask) -> np.ndarray:
    lengths = {len(q.candidates) for q in task.queries}
    if len(lengths) != 1:
        raise ValueError(f"queries have different candidate counts {sorted(lengths)}")
    return np.array([q.candidates for q in task.queries], dtype=object)


def evaluate_with_encodings(task: RankingTask, encodings: Encodings, similarity: str = "maxsim_mean",
                            batch_size: int = 16, show_progress: bool = True) -> RankingResult:
    """Score each query's candidates with its encodings; MRR×100 and per-query rankings."""
    # Here, not at the top: the tables import this module for its readers and must not load torch.
    import torch

    from multivec.metrics.maxsim import cosine, maxsim_mean, normalize, pad_vector_sets

    if similarity not in SIMILARITIES:
        raise ValueError(f"similarity must be one of {SIMILARITIES}, not {similarity!r}")
    by_id = encodings.by_id()
    needed = task.used_document_ids()
    missing = [i for i in needed if i not in by_id]
    if missing:
        raise KeyError(f"{len(missing)} task document(s) have no encoding, e.g. {missing[:5]}")
    position = {doc_id: k for k, doc_id in enumerate(needed)}
    candidates = _candidate_matrix(task)
    candidate_rows = torch.as_tensor(np.vectorize(position.__getitem__)(candidates).astype(np.int64))
    source_rows = torch.as_tensor([position[q.source] for q in task.queries])

    if similarity == "cosine":
        counts = {doc_id: len(by_id[doc_id]) for doc_id in needed}
        multi = [doc_id for doc_id, n in counts.items() if n != 1]
        if multi:
            raise ValueError(f"cosine needs one vector per document; {len(multi)} have more, e.g. {multi[0]!r} "
                             f"has {counts[multi[0]]} (use maxsim_mean)")
        vectors = normalize(torch.as_tensor(np.stack([by_id[i][0] for i in needed]), dtype=torch.float32))
        scores = cosine(vectors[source_rows].unsqueeze(1), vectors[candidate_rows]).numpy()
        return result_from_scores(task, scores, "cosine")

    padded, mask = pad_vector_sets([by_id[i] for i in needed])
    padded = normalize(padded)
    scores = np.empty(candidates.shape, dtype=np.float64)
    n = len(task.queries)
    with torch.inference_mode():
        for start in tqdm(range(0, n, batch_size), desc="MaxSim-mean", unit="batch", disable=not show_progress):
            src = source_rows[start:start + batch_size]
            cand = candidate_rows[start:start + batch_size]
            scores[start:start + batch_size] = maxsim_mean(
                padded[src].unsqueeze(1), mask[src].unsqueeze(1), padded[cand], mask[cand], normalized=True).numpy()
    return result_from_scores(task, scores, "maxsim_mean")


def evaluate_with_bm25(task: RankingTask, batch_size: int = 256, show_progress: bool = True) -> RankingResult:
    """BM25 (``multivec.retrieval.bm25``) of each candidate with the source as query.

    The index (and so the idf) covers every document that is some query's candidate.
    """
    candidates = _candidate_matrix(task)
    corpus_ids = list(dict.fromkeys(candidates.ravel().tolist()))
    column = {doc_id: k for k, doc_id in enumerate(corpus_ids)}
    index = BM25Index([task.documents[i] for i in corpus_ids], show_progress=show_progress)
    candidate_columns = np.vectorize(column.__getitem__)(candidates).astype(np.int64)
    scores = np.empty(candidates.shape, dtype=np.float64)
    n = len(task.queries)
    for start in tqdm(range(0, n, batch_size), desc="BM25 ranking", unit="batch", disable=not show_progress):
        stop = min(n, start + batch_size)
        batch = index.score([task.documents[q.source] for q in task.queries[start:stop]], show_progress=False)
        scores[start:stop] = np.take_along_axis(batch, candidate_columns[start:stop], axis=1)
    return result_from_scores(task, scores, "bm25")


def read_row_metrics(paths: Sequence[str | os.PathLike]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{row: {task: metrics}}`` from the per-(row, task) JSON files the evaluation rules write
    (Tables 2 and 4)."""
    from multivec.io import read_json

    metrics: dict[str, dict[str, dict[str, Any]]] = {}
    for path in paths:
        m = read_json(path)
        metrics.setdefault(m["row"], {})[m["task"]] = m
    return metrics
