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
TABLE7_COLUMNS = ["row", "system", "kind", "stand_in", "split", "sentences", "predicted", "gold", *OUR_COLUMNS,
                  *PAPER_COLUMNS]


def predicted_token_sets(sentences, segmenter, alignment: str = "authors") -> tuple[list[list[frozenset[int]]], dict]:
    """Each PropSegment sentence's predicted propositions as token sets (claims -> App. A.3
    char spans, mode ``alignment`` -> PropSegment tokens), and counts of what was dropped."""
    from multivec.subencoder.propsegment import tokens_in_spans
    from multivec.subencoder.segmentation import segment_and_align

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


def training_segmenter_note(kind: str, alignment: str) -> str:
    """A line of Table 7 on the segmenter of the training data (``subencoder.segmenter.kind``)."""
    from multivec.subencoder.segmentation import ORACLE_NAME

    if kind == "oracle":
        return (f"Training data: the {ORACLE_NAME} of the PropSegment TEST sentences the training pairs come from. It has "
                "no row here (N/A): scored against the same human segmentations it is 100 by construction, and it "
                "never reads a DEV sentence. Predicted claims above are aligned with App. A.3 mode "
                f"{alignment!r}.")
    return (f"Training data: segmented by the {kind!r} segmenter (its row above); claims aligned with App. A.3 "
            f"mode {alignment!r}.")


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


def table7_rows(scores: Sequence[dict]) -> list[dict]:
    """Our rows (one per segmenter kind and split, from ``table7_scores``) then the paper's reference rows.

    Paper values fill ``paper_*`` of the row computing the same system (the LLM and the distilled T5 at
    paper scale); the fine-tuned systems of Chen et al. are reference rows with our columns empty. ``row``
    is the statistics layer's row name (``table_units.table7_row``).
    """
    from multivec.subencoder.table_units import table7_row

    rows = []
    for entry in scores:
        paper = PAPER_TABLE7.get(PAPER_ROW_OF_KIND.get(entry["kind"]) if not entry["stand_in"] else None)
        ours = []
        for theta in (0.8, 0.5):
            prf = prf_of(entry["sentences"], theta)
            ours += [round(prf.precision, 2), round(prf.recall, 2), round(prf.f1, 2)]
        rows.append({"row": table7_row(entry["kind"], entry["split"]), "system": entry["system"],
                     "kind": entry["kind"], "stand_in": entry["stand_in"], "split": entry["split"],
                     "sentences": len(entry["sentences"]), "predicted": prf_of(entry["sentences"], 0.8).predicted,
                     "gold": prf_of(entry["sentences"], 0.8).gold, **dict(zip(OUR_COLUMNS, ours)),
                     **dict(zip(PAPER_COLUMNS, paper if paper else [None] * 6))})
    computed = {PAPER_ROW_OF_KIND.get(e["kind"]) for e in scores if not e["stand_in"]}
    for system, values in PAPER_TABLE7.items():
        if system in computed:
            continue
        rows.append({"row": f"{system} [paper only]", "system": f"{system} [paper only]", "kind": "paper",
                     "stand_in": False, "split": "as published", "sentences": None, "predicted": None, "gold": None,
                     **dict.fromkeys(OUR_COLUMNS), **dict(zip(PAPER_COLUMNS, values))})
    return rows


def table7_markdown(table, scale_line: str, sections: Sequence[str] = ()) -> str:
    """Table 7 as Markdown: ``table`` (a frame of ``TABLE7_COLUMNS``, with ``<metric>_lo/_hi/_sd`` beside
    our metrics once the statistics are added) with compact ``mean [lo, hi]`` cells, then ``sections``
    (the paired comparisons and the claims' verdicts)."""
    from multivec.subencoder.tables import markdown_table

    lines = ["# Sub-sentence encoder Table 7: proposition segmentation vs PropSegment", "", scale_line.strip(), "",
             "Jaccard-matched precision / recall / F1 (x100) at theta = 0.8 and 0.5, one-to-one matching per "
             "sentence, micro-averaged (Chen et al. 2023, PropSegmEnt). Claims are aligned to the sentence "
             "with App. A.3 before matching. [lo, hi]: 95% bootstrap CI over sentences (segmenters are not "
             "trained here, so there is no seed SD). paper_*: Table 7 of Chen et al. 2023 (Sub-sentence "
             "encoder), zero-shot on PropSegment; `[paper only]` rows are systems we do not run. Rows with "
             "stand_in = True are the demo's offline stand-in, not the paper's segmenter.", ""]
    lines += markdown_table(table, OUR_COLUMNS)
    if sections:
        lines += ["", *sections]
    return "\n".join(lines) + "\n"


def table7_frame(scores: Sequence[dict]):
    """Table 7 (``TABLE7_COLUMNS``) from ``table7_scores``: our rows then the paper's reference rows."""
    import pandas as pd

    table = pd.DataFrame(table7_rows(scores), columns=TABLE7_COLUMNS)
    table[["sentences", "predicted", "gold"]] = table[["sentences", "predicted", "gold"]].astype("Int64")
    return table
