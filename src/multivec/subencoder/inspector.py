"""Inspectors for the sub-sentence encoder's training data (Chen et al. 2023, §3.3, App. A.3).

- sentence pairs ``data/built/subencoder/pairs/pairs.jsonl`` (``data/sentence_pairs.py``);
- segmented sentences ``data/built/subencoder/{segments,llm_seed}/segments.jsonl``
  (``data/segmentation.py``): claims and their aligned char spans;
- training rows ``data/built/subencoder/{train,dev}.jsonl`` (``data/training_rows.py``): each
  proposition's words marked in its sentence, its label, and how many positives it has.

With ``--tokenizer`` the marked subwords (``masks.py``) are shown as the encoder will see them.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from multivec.inspection.common import Report, jsonl_first_row_has, length_summary, load_rows_checked, short
from multivec.inspection.registry import inspector


def mark(sentence: str, char_spans) -> str:
    """The sentence with the spans' characters in [brackets]."""
    out, last = [], 0
    for start, end in sorted(char_spans):
        out += [sentence[last:start], "[", sentence[start:end], "]"]
        last = end
    out.append(sentence[last:])
    return "".join(out)


def _show_tokens(report: Report, sentence: str, spans) -> None:
    tokenizer = report.load_tokenizer()
    if tokenizer is None:
        return
    from multivec.subencoder.masks import spans_to_token_mask

    enc = tokenizer(sentence, return_offsets_mapping=True, return_special_tokens_mask=True)
    mask = spans_to_token_mask(enc["offset_mapping"], spans, enc["special_tokens_mask"])
    tokens = tokenizer.convert_ids_to_tokens(enc["input_ids"])
    report.line("        subwords: " + " ".join(f"[{t}]" if m else t for t, m in zip(tokens, mask)))


@inspector("subencoder training rows", "sub-sentence encoder training rows: sentence, propositions with char "
           "spans and contrastive labels", jsonl_first_row_has("sentence", "pair_id", "propositions"), 75)
def inspect_training_rows(path: Path, report: Report) -> None:
    from multivec.subencoder.data.training_rows import validate_row

    rows = load_rows_checked(path, {"id": str, "sentence": str, "pair_id": str, "propositions": list},
                             "training row", validate_row)
    labels = Counter(p["label"] for r in rows for p in r["propositions"])
    props = [len(r["propositions"]) for r in rows]
    positives = sum(1 for r in rows for p in r["propositions"] if labels[p["label"]] > 1)
    report.line(f"rows (sentences): {len(rows)}  pairs: {len({r['pair_id'] for r in rows})}  "
                f"propositions: {sum(props)}  labels: {len(labels)}  propositions with a positive: {positives}")
    report.line(f"propositions per sentence: {length_summary(props)}")
    for row in rows[:report.n]:
        report.line(f"  {row['id']}  {short(row['sentence'])}")
        for p in row["propositions"]:
            report.line(f"    label {p['label']} ({labels[p['label']] - 1} positive): {short(p['text'], 120)}")
            report.line(f"        words: {short(mark(row['sentence'], p['char_spans']))}")
            _show_tokens(report, row["sentence"], p["char_spans"])


@inspector("subencoder segments", "sentences segmented into propositions (claims + aligned char spans)",
           jsonl_first_row_has("sentence", "propositions", without=("pair_id",)), 74)
def inspect_segments(path: Path, report: Report) -> None:
    rows = load_rows_checked(path, {"id": str, "sentence": str, "propositions": list}, "segmented sentence")
    props = [len(r["propositions"]) for r in rows]
    segmenters = Counter(r.get("segmenter", "?") for r in rows)
    report.line(f"sentences: {len(rows)}  propositions: {sum(props)}  without any: {props.count(0)}")
    for name, count in segmenters.items():
        stand_in = any(r.get("stand_in") for r in rows if r.get("segmenter", "?") == name)
        report.line(f"segmenter: {name}{' [DEMO STAND-IN]' if stand_in else ''}: {count} sentences")
    for row in rows[:report.n]:
        report.line(f"  {row['id']}  {short(row['sentence'])}")
        for p in row["propositions"]:
            report.line(f"    {short(p['text'], 120)}")
            report.line(f"        words: {short(mark(row['sentence'], p['char_spans']))}")


@inspector("subencoder sentence pairs", "unlabelled sentence pairs (a, b) from comparable text",
           jsonl_first_row_has("pair_id", "a", "b"), 74)
def inspect_pairs(path: Path, report: Report) -> None:
    rows = load_rows_checked(path, {"pair_id": str, "a": dict, "b": dict}, "sentence pair")
    sentences = {r[s]["id"] for r in rows for s in ("a", "b")}
    report.line(f"pairs: {len(rows)}  distinct sentences: {len(sentences)}")
    for row in rows[:report.n]:
        report.line(f"  {row['pair_id']}")
        report.line(f"    a: {short(row['a']['sentence'])}")
        report.line(f"    b: {short(row['b']['sentence'])}")
