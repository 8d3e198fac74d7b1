"""NUGGET Table 3 (Qin & Van Durme 2023, §6.2): the language model's per-segment word NLL turned into the
table's perplexities, their uncertainty and the paper's numbers beside them.

- ``segment_records``: one record per test segment, its word count and summed word NLL at every history
  length h (from ``language_model.evaluate_segments``);
- ``lm_measurements``: ``ppl_h<h>`` (statistic ``perplexity``) and ``drop_h0_h<h>`` (``relative_drop``,
  1 - ppl_h / ppl_0) per segment, for the bootstrap and the claims;
- ``table3_rows``, ``table3_metrics``, ``table3_markdown``: the table.

No torch at import: the workflow reads ``table3_metrics`` while it parses.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from multivec.io.markdown_table import markdown_table

# The paper's Table 3 (WikiText-103 test PPL), copied from its text; cells it leaves '-' are absent.
PAPER_TABLE3: dict[str, dict[int, float]] = {
    "nugget_r0.05": {1: 29.88, 2: 29.25, 4: 28.24},
    "nugget_r0.1": {1: 29.83, 2: 29.21, 4: 28.44, 8: 28.10},
    "tsdae": {1: 30.09, 2: 29.55, 4: 29.01, 8: 28.77},
    "compressive": {4: 30.52},
    "transformer": {0: 31.46},
}
TABLE3_LABELS = {"nugget_r0.05": "NUGGET r=0.05", "nugget_r0.1": "NUGGET r=0.1", "tsdae": "TSDAE",
                 "compressive": "Compressive Transformer", "transformer": "Transformer (h = 0)"}


def segment_records(per_history: dict[int, dict[str, tuple[float, int]]]) -> list[dict[str, Any]]:
    """One record per segment ``{segment, words, nll: {h: summed word NLL}}`` from ``evaluate_segments``'
    per-segment results at each h (the kept words do not depend on h; a mismatch raises ValueError)."""
    histories = sorted(per_history)
    if not histories:
        raise ValueError("no history length evaluated")
    records = []
    for segment, (_, words) in per_history[histories[0]].items():
        nll = {}
        for h in histories:
            value, n = per_history[h][segment]
            if n != words:
                raise ValueError(f"segment {segment}: {words} words at h = {histories[0]} but {n} at h = {h}")
            nll[str(h)] = value
        records.append({"segment": segment, "words": words, "nll": nll})
    return records


def lm_measurements(path: str | os.PathLike, row: str, seed: int | None, histories: Sequence[int]) -> list:
    """Table 3's per-segment Measurements of one LM: ``ppl_h<h>`` (statistic ``perplexity``, (word NLL,
    words) per segment: exactly the table's word perplexity) for each h, and ``drop_h0_h<h>`` (statistic
    ``relative_drop``: 1 - ppl_h / ppl_0, the share of perplexity h history segments remove) for each h > 0."""
    from multivec.io import read_jsonl
    from multivec.statistics import Measurement

    records = read_jsonl(path)
    if not records:
        raise ValueError(f"{path}: no segments")
    missing = [h for h in histories if str(h) not in records[0]["nll"]]
    if missing or 0 not in histories:
        raise ValueError(f"{path}: needs h = 0 and every h of {list(histories)}; missing {missing or [0]}")
    units = [r["segment"] for r in records]
    words = [r["words"] for r in records]
    out = [Measurement(row, f"ppl_h{h}", "perplexity", units, [(r["nll"][str(h)], n) for r, n in zip(records, words)],
                       seed) for h in histories]
    out += [Measurement(row, f"drop_h0_h{h}", "relative_drop", units,
                        [(r["nll"]["0"], n, r["nll"][str(h)], n) for r, n in zip(records, words)], seed)
            for h in histories if h != 0]
    return out


def table3_rows(results: dict[str, dict], histories: Sequence[int]) -> list[dict[str, Any]]:
    """One row per LM: measured word PPL at each h (``results[row]["perplexity"][str(h)]["ppl"]``) and the
    paper's ``paper_h{h}`` (empty where the paper prints '-')."""
    rows = []
    for name, result in results.items():
        row: dict[str, Any] = {"row": name, "model": TABLE3_LABELS.get(name, name), "history": result["history"]}
        for h in histories:
            cell = result["perplexity"].get(str(h))
            if cell is None:
                raise ValueError(f"LM {name!r}: no perplexity at h = {h}")
            row[f"ppl_h{h}"] = round(cell["ppl"], 2)
        for h in histories:
            paper = PAPER_TABLE3.get(name, {}).get(h)
            row[f"paper_h{h}"] = "" if paper is None else paper
        rows.append(row)
    return rows


def memory_positions_note(memory_positions: str) -> str:
    """One sentence saying how the nugget rows' history reached the LM (``LMSettings.memory_positions``)."""
    notes = {"segment": "the nugget rows' history vectors carry the positions they had in their segment",
             "none": "the nugget rows' history is the nugget vectors alone, as TSDAE's mean and the compressive states are"}
    if memory_positions not in notes:
        raise ValueError(f"memory_positions={memory_positions!r}: expected one of {sorted(notes)}")
    return notes[memory_positions] + f" (`memory_positions: {memory_positions}`)"


def table3_metrics(histories: Sequence[int]) -> list[str]:
    """Table 3's metrics as the unit files name them: ``ppl_h<h>`` per h, then ``drop_h0_h<h>`` per h > 0."""
    return [f"ppl_h{h}" for h in histories] + [f"drop_h0_h{h}" for h in histories if h != 0]


def table3_markdown(rows: Sequence[dict[str, Any]], histories: Sequence[int], scale_line: str,
                    notes: Sequence[str] = ()) -> str:
    """Table 3 as Markdown: a title, the run's scale line, one row per LM (perplexities ``mean [lo, hi] ±sd``
    when the rows carry their statistics), the relative drops when measured, and the notes a reader needs
    to compare our perplexities with the paper's."""
    from multivec.statistics import estimate_cell

    drops = [h for h in histories if h != 0 and f"drop_h0_h{h}" in rows[0]] if rows else []
    head = (["row", "model"] + [f"h={h}" for h in histories] + [f"drop h=0→{h}" for h in drops]
            + [f"paper h={h}" for h in histories])
    lines = ["# NUGGET Table 3 reproduction (language modelling with compressed history, §6.2)", "", scale_line, "",
             *markdown_table(head, ([row["row"], row["model"]] + [estimate_cell(row, f"ppl_h{h}") for h in histories]
                                    + [estimate_cell(row, f"drop_h0_h{h}", 3) for h in drops]
                                    + [str(row[f"paper_h{h}"]) for h in histories] for row in rows))]
    lines += ["", "Word-level perplexity (a word's probability is the product over its subwords, §6.2.1 fn. 6; "
              "out-of-vocabulary words excluded), segments of s target tokens, h history segments. paper h=*: "
              "Qin & Van Durme, NUGGET, ICML 2023, Table 3 (WikiText-103, mBART; empty where the paper prints "
              "'-'). The Transformer row has no history at any h, so its columns repeat its h = 0 value. drop h=0→h: "
              "1 - ppl_h / ppl_0, the share of perplexity h history segments remove.", *notes]
    return "\n".join(lines) + "\n"
