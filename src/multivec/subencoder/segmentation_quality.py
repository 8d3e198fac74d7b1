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

# The paper's systems as our segmenter kinds compute them (paper scale), for the paper_* columns.
PAPER_ROW_OF_KIND = {"llm": "GPT-3.5-turbo", "seq2seq": "T5-Large (w/ GPT3.5 training data)"}
OUR_COLUMNS = ("p_0.8", "r_0.8", "f1_0.8", "p_0.5", "r_0.5", "f1_0.5")
TABLE7_COLUMNS = ["system", "kind", "stand_in", "split", "sentences", "predicted", "gold", *OUR_COLUMNS,
                  *PAPER_COLUMNS]


def predicted_token_sets(sentences, segmenter) -> tuple[list[list[frozenset[int]]], dict]:
    """Each PropSegment sentence's predicted propositions as token sets (claims -> App. A.3
    char spans -> PropSegment tokens), and counts of what was dropped."""
    from multivec.subencoder.propsegment import tokens_in_spans
    from multivec.subencoder.segmentation import segment_and_align

    rows, counts = segment_and_align({s.key: s.text for s in sentences}, segmenter)
    predicted = []
    for sentence, row in zip(sentences, rows):
        sets = [tokens_in_spans(sentence.token_spans, p["char_spans"]) for p in row["propositions"]]
        predicted.append([s for s in sets if s])
    return predicted, {"malformed_or_empty": counts.malformed_or_empty,
                       "unaligned_claims": counts.propositions_unaligned}


def table7_rows(splits: dict, segmenters: dict) -> list[dict]:
    """Our rows (one per segmenter kind and split) then the paper's reference rows.

    ``splits``: split name -> PropSegment sentences with a human segmentation; ``segmenters``:
    kind -> segmenter. Paper values fill ``paper_*`` of the row computing the same system
    (the LLM and the distilled T5 at paper scale); the fine-tuned systems of Chen et al. are
    reference rows with our columns empty.
    """
    rows = []
    for kind, segmenter in segmenters.items():
        paper = PAPER_TABLE7.get(PAPER_ROW_OF_KIND.get(kind) if not segmenter.stand_in else None)
        for split, sentences in splits.items():
            predicted, _ = predicted_token_sets(sentences, segmenter)
            scores = evaluate(predicted, [s.propositions for s in sentences])
            ours = []
            for theta in (0.8, 0.5):
                ours += [round(scores[theta].precision, 2), round(scores[theta].recall, 2), round(scores[theta].f1, 2)]
            rows.append({"system": segmenter.name, "kind": kind, "stand_in": segmenter.stand_in, "split": split,
                         "sentences": len(sentences), "predicted": scores[0.8].predicted, "gold": scores[0.8].gold,
                         **dict(zip(OUR_COLUMNS, ours)),
                         **dict(zip(PAPER_COLUMNS, paper if paper else [None] * 6))})
    computed = {PAPER_ROW_OF_KIND.get(k) for k, s in segmenters.items() if not s.stand_in}
    for system, values in PAPER_TABLE7.items():
        if system in computed:
            continue
        rows.append({"system": f"{system} [paper only]", "kind": "paper", "stand_in": False, "split": "as published",
                     "sentences": None, "predicted": None, "gold": None, **dict.fromkeys(OUR_COLUMNS),
                     **dict(zip(PAPER_COLUMNS, values))})
    return rows


def table7_markdown(rows: list[dict], scale_line: str) -> str:
    def cell(v):
        if v is None:
            return ""
        return f"{v:.2f}" if isinstance(v, float) else str(v)

    lines = ["# Sub-sentence encoder Table 7: proposition segmentation vs PropSegment", "", scale_line.strip(), "",
             "Jaccard-matched precision / recall / F1 (x100) at theta = 0.8 and 0.5, one-to-one matching per "
             "sentence, micro-averaged (Chen et al. 2023, PropSegmEnt). Claims are aligned to the sentence "
             "with App. A.3 before matching. paper_*: Table 7 of Chen et al. 2023 (Sub-sentence encoder), "
             "zero-shot on PropSegment; `[paper only]` rows are systems we do not run. Rows with "
             "stand_in = True are the demo's offline stand-in, not the paper's segmenter.", ""]
    lines.append("| " + " | ".join(TABLE7_COLUMNS) + " |")
    lines.append("|" + "|".join("---" for _ in TABLE7_COLUMNS) + "|")
    for row in rows:
        lines.append("| " + " | ".join(cell(row[c]) for c in TABLE7_COLUMNS) + " |")
    return "\n".join(lines) + "\n"
