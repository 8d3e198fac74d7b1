"""Ranking metrics: where the gold results land in a ranking.

- Mean reciprocal rank (MRR), NUGGET's Table 2 metric (Qin & Van Durme 2023, §6.1), ×100, over the 20
  candidates of a score matrix (``ranks_of_answers``, ``reciprocal_ranks``, ``mrr_at``). Ties are pessimistic: a
  candidate that scores exactly as high as the answer is ranked above it. Breaking ties by candidate order would
  reward a constant scorer, because the released PI set lists the answer first in 1000 of its 1024 queries (and
  RR in 637).
- Precision@1 and recall@k of one ranked list against its gold set, the sub-sentence encoder's atomic-fact
  retrieval metrics (Chen et al. 2023, §4.2.1 "Metrics", Tables 1, 4, 5, 8; ``precision_at_1``, ``recall_at_k``,
  ``precision_recall_at``): P@1 = 1 if the top-1 result is gold, else 0; R@k = |gold ∩ top-k| / |gold|. Each is
  one query's value (a fraction); callers average over queries.

numpy only: the tables read rankings with this module and must not load torch.
"""

from __future__ import annotations

from typing import AbstractSet, Sequence

import numpy as np


def _check(scores, answers) -> tuple[np.ndarray, np.ndarray]:
    scores = np.asarray(scores, dtype=np.float64)
    answers = np.asarray(answers, dtype=np.int64)
    if scores.ndim != 2:
        raise ValueError(f"scores must be (n_queries × n_candidates), got shape {scores.shape}")
    if answers.shape != (scores.shape[0],):
        raise ValueError(f"{scores.shape[0]} score rows but answers of shape {answers.shape}")
    if np.isnan(scores).any():
        bad = np.flatnonzero(np.isnan(scores).any(axis=1))
        raise ValueError(f"NaN scores in {len(bad)} queries (first: row {bad[0]})")
    if ((answers < 0) | (answers >= scores.shape[1])).any():
        raise ValueError(f"answer index outside 0..{scores.shape[1] - 1}")
    return scores, answers


def ranks_of_answers(scores, answers) -> np.ndarray:
    """1-based rank of each query's answer: 1 + #candidates scoring >= the answer, the answer excluded."""
    scores, answers = _check(scores, answers)
    answer_scores = scores[np.arange(len(answers)), answers][:, None]
    return (scores >= answer_scores).sum(axis=1).astype(np.int64)  # counts the answer itself once


def reciprocal_ranks(scores, answers) -> np.ndarray:
    """1 / rank of the answer per query (pessimistic ties)."""
    return 1.0 / ranks_of_answers(scores, answers)


def mrr_at(scores, answers, k: int | None = None) -> float:
    """MRR×100; with ``k``, an answer ranked below k contributes 0 (MRR@k). None: all candidates."""
    ranks = ranks_of_answers(scores, answers)
    reciprocal = 1.0 / ranks
    if k is not None:
        reciprocal[ranks > k] = 0.0
    return float(100.0 * reciprocal.mean())


def precision_at_1(ranking: Sequence[int], gold: AbstractSet[int]) -> float:
    """P@1 of one ranking: 1.0 if its top-1 result is in ``gold``, else 0.0 (an empty ranking: 0.0)."""
    return float(bool(ranking) and ranking[0] in gold)


def recall_at_k(ranking: Sequence[int], gold: AbstractSet[int], k: int) -> float:
    """R@k of one ranking: |gold ∩ top-k| / |gold|."""
    return len(gold & set(ranking[:k])) / len(gold)


def precision_recall_at(ranking: Sequence[int], gold: AbstractSet[int], ks: Sequence[int]) -> dict[str, float]:
    """``{"p@1": P@1, "r@<k>": R@k for k in ks}`` (fractions) of one ranking against its gold set."""
    if not gold:
        raise ValueError("a query without gold units cannot be scored")
    out = {"p@1": precision_at_1(ranking, gold)}
    for k in ks:
        out[f"r@{k}"] = recall_at_k(ranking, gold, k)
    return out
