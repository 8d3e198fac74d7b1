"""Mean reciprocal rank (MRR), Table 2's metric (NUGGET §6.1): ×100, over the 20 candidates.

Ties are pessimistic: a candidate that scores exactly as high as the answer is ranked above
it. Breaking ties by candidate order would reward a constant scorer, because the released
PI set lists the answer first in 1000 of its 1024 queries (and RR in 637).
"""

from __future__ import annotations

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
