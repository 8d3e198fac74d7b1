"""Segmentation quality against PropSegment (Chen et al. 2023 Sub-sentence encoder, Table 7, App. A.4).

As PropSegmEnt (Chen et al. 2023) defines it: propositions are token sets; a predicted and a
gold proposition of the same sentence match when their Jaccard similarity is >= theta, each
proposition matched at most once (maximum bipartite matching); precision = matched / predicted,
recall = matched / gold, summed over all sentences (micro), F1 their harmonic mean, x100.

Predicted claims are natural language; they become token sets the same way the training data
does it: App. A.3 alignment (``alignment.py``) to char spans, then the PropSegment tokens
inside those spans.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np


def jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def matched_count(predicted: Sequence[frozenset[int]], gold: Sequence[frozenset[int]], theta: float) -> int:
    """Size of the maximum one-to-one matching between predicted and gold with Jaccard >= theta."""
    if not predicted or not gold:
        return 0
    from scipy.optimize import linear_sum_assignment

    ok = np.array([[jaccard(p, g) >= theta for g in gold] for p in predicted], dtype=np.int64)
    rows, cols = linear_sum_assignment(ok, maximize=True)
    return int(ok[rows, cols].sum())


@dataclass
class PRF:
    matched_predicted: int = 0
    predicted: int = 0
    matched_gold: int = 0
    gold: int = 0

    def add(self, predicted, gold, theta: float) -> None:
        m = matched_count(predicted, gold, theta)
        self.matched_predicted += m
        self.matched_gold += m
        self.predicted += len(predicted)
        self.gold += len(gold)

    @property
    def precision(self) -> float:
        return 100.0 * self.matched_predicted / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return 100.0 * self.matched_gold / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def evaluate(predicted: Sequence[Sequence[frozenset[int]]], gold: Sequence[Sequence[frozenset[int]]],
             thetas: Sequence[float] = (0.8, 0.5)) -> dict[float, PRF]:
    """Micro P/R/F1 per theta over sentences (``predicted[i]`` and ``gold[i]``: one sentence)."""
    if len(predicted) != len(gold):
        raise ValueError(f"{len(predicted)} predicted sentences but {len(gold)} gold ones")
    scores = {theta: PRF() for theta in thetas}
    for p, g in zip(predicted, gold):
        for theta, prf in scores.items():
            prf.add(list(p), list(g), theta)
    return scores


# Table 7 of the Sub-sentence encoder paper (App. A.4), copied from the paper's text:
# (precision, recall, F1) at theta 0.8, then at theta 0.5.
PAPER_TABLE7 = {
    "GPT-3.5-turbo": (35.79, 31.65, 33.60, 71.52, 63.87, 67.48),
    "T5-Large (w/ GPT3.5 training data)": (35.91, 31.70, 33.68, 70.27, 63.39, 66.65),
    "BERT-Large (fine-tuned on PropSegment, Chen et al. 2023)": (34.97, 33.42, 34.17, 67.42, 64.17, 65.75),
    "T5-Large (fine-tuned on PropSegment, Chen et al. 2023)": (55.95, 55.05, 55.50, 78.03, 76.74, 77.38),
}
PAPER_COLUMNS = ("paper_p_0.8", "paper_r_0.8", "paper_f1_0.8", "paper_p_0.5", "paper_r_0.5", "paper_f1_0.5")
