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


OUR_COLUMNS = ("p_0.8", "r_0.8", "f1_0.8", "p_0.5", "r_0.5", "f1_0.5")


def predicted_token_sets(sentences, segmenter, alignment: str = "authors") -> tuple[list[list[frozenset[int]]], dict]:
    """Each PropSegment sentence's predicted propositions as token sets (claims -> App. A.3
    char spans, mode ``alignment`` -> PropSegment tokens), and counts of what was dropped."""
    from multivec.subencoder.data.propsegment import tokens_in_spans
    from multivec.subencoder.data.segmentation import segment_and_align

    rows, counts = segment_and_align({s.key: s.text for s in sentences}, segmenter, alignment)
    predicted = []
    for sentence, row in zip(sentences, rows):
        sets = [tokens_in_spans(sentence.token_spans, p["char_spans"]) for p in row["propositions"]]
        predicted.append([s for s in sets if s])
    return predicted, {"malformed_or_empty": counts.malformed_or_empty,
                       "unaligned_claims": counts.propositions_unaligned}


def sentence_scores(sentences, predicted: Sequence[Sequence[frozenset[int]]],
                    thetas: Sequence[float] = (0.8, 0.5)) -> list[dict]:
    """Per-sentence counts (the evaluation units of Table 7's CIs): ``{"id", "predicted", "gold",
    "matched_<theta>"}``; summed over sentences they give ``evaluate``'s micro P/R/F1."""
    if len(predicted) != len(sentences):
        raise ValueError(f"{len(predicted)} predicted sentences but {len(sentences)} gold ones")
    return [{"id": s.key, "predicted": len(p), "gold": len(s.propositions),
             **{f"matched_{theta}": matched_count(list(p), list(s.propositions), theta) for theta in thetas}}
            for s, p in zip(sentences, predicted)]


def prf_of(scores: Sequence[dict], theta: float) -> PRF:
    """Micro P/R/F1 at ``theta`` of per-sentence counts (``sentence_scores``)."""
    matched = sum(s[f"matched_{theta}"] for s in scores)
    return PRF(matched, sum(s["predicted"] for s in scores), matched, sum(s["gold"] for s in scores))


def table7_scores(splits: dict, segmenters: dict, alignment: str = "authors") -> list[dict]:
    """Every segmenter kind on every split, per sentence: ``{"system", "kind", "stand_in", "split",
    "sentences": sentence_scores}``. ``splits``: split name -> PropSegment sentences with a human
    segmentation; ``segmenters``: kind -> segmenter. A split with no such sentence stops with a
    ValueError: its P/R/F1 would be written as 0.0 although nothing was measured."""
    empty = [split for split, sentences in splits.items() if not sentences]
    if empty:
        raise ValueError(f"Table 7: split(s) {', '.join(empty)} have no sentence with a human segmentation "
                         "(did the propositions file match the clusters file?); refusing to score P/R/F1 on "
                         "nothing")
    out = []
    for kind, segmenter in segmenters.items():
        for split, sentences in splits.items():
            predicted, dropped = predicted_token_sets(sentences, segmenter, alignment)
            out.append({"system": segmenter.name, "kind": kind, "stand_in": bool(segmenter.stand_in),
                        "split": split, "sentences": sentence_scores(sentences, predicted), "dropped": dropped})
    return out


def table7_warnings(scores: Sequence[dict]) -> list[str]:
    """A line for every row of ``table7_scores`` whose precision is 0 by convention (no proposition
    predicted) and for every row that dropped claims (malformed/empty generations, unaligned claims)."""
    lines = []
    for entry in scores:
        what = f"{entry['kind']} segmenter on {entry['split']}"
        if not sum(s["predicted"] for s in entry["sentences"]):
            lines.append(f"WARNING: the {what} predicted no proposition in {len(entry['sentences'])} sentences; "
                         "its P/R/F1 are 0 by convention, not a measured score.")
        dropped = entry.get("dropped") or {}
        if any(dropped.values()):
            lines.append(f"The {what} dropped " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in dropped.items())
                         + " (App. A.3 alignment gave them no word of the sentence, or the generation was unusable).")
    return lines
