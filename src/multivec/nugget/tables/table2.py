"""NUGGET Table 2 (§6.1): our rows beside the paper's, as CSV and markdown.

Table 2 reports MRR×100 over 20 candidates on document paraphrase identification (PI,
ParaBank, the released dev set) and passage reranking (RR, WikiText-103).

``PAPER_TABLE2`` holds all eight rows of the paper's Table 2 (NUGGET AE r=0.25, NUGGET MT
r=0.05/0.1/0.15/0.25, TSDAE AE/MT, ColBART), copied from the paper's text
(``nugget_qin_vandurme_icml2023.txt``, Table 2). They fill only the ``paper_*`` columns, matched
to our rows by model, objective and ratio; rows of ours with no published counterpart
(mean-pooled, BM25) keep them empty.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from multivec.io.markdown_table import markdown_table

PAPER_SOURCE = "Qin & Van Durme, NUGGET, ICML 2023, Table 2"

# objective / ratio None: the paper row does not depend on it (matches any of ours).
PAPER_TABLE2: list[dict[str, Any]] = [
    {"model": "NUGGET", "objective": "AE", "ratio": 0.25, "PI": 92.30, "RR": 44.81},
    {"model": "NUGGET", "objective": "MT", "ratio": 0.05, "PI": 92.11, "RR": 40.54},
    {"model": "NUGGET", "objective": "MT", "ratio": 0.1, "PI": 96.69, "RR": 50.04},
    {"model": "NUGGET", "objective": "MT", "ratio": 0.15, "PI": 97.31, "RR": 52.36},
    {"model": "NUGGET", "objective": "MT", "ratio": 0.25, "PI": 97.38, "RR": 56.51},
    {"model": "TSDAE", "objective": "AE", "ratio": None, "PI": 95.59, "RR": 50.48},
    {"model": "TSDAE", "objective": "MT", "ratio": None, "PI": 95.04, "RR": 45.86},
    {"model": "ColBART", "objective": None, "ratio": None, "PI": 94.83, "RR": 52.44},
]

TABLE2_COLUMNS = ["row", "model", "objective", "ratio", "multi_vector", "PI", "RR", "paper_PI", "paper_RR",
                  "vectors_per_doc", "n_queries_PI", "n_queries_RR", "train_steps", "best_dev_loss", "unigram_nats",
                  "gate"]
# best_dev_loss / unigram_nats / gate: the sanity gate of a trained row (multivec.nugget.gates): its
# best dev loss must be below the unigram entropy of its dev targets; "ok" or "FAILED: ..." naming the numbers.
# No wall-clock column: the table is byte-identical across runs of the same seed; training minutes are
# in each model's training_summary.json and the rules' benchmark files.
INPUT_COLUMNS = [c for c in TABLE2_COLUMNS if not c.startswith("paper_")]
METRICS = ["PI", "RR"]  # with the statistics, each is followed by <metric>_lo, _hi, _sd (multivec.statistics)


def _missing(value) -> bool:
    """None, NaN or pandas' NA."""
    return value is None or (not isinstance(value, (str, bytes)) and bool(pd.isna(value)))


def paper_row(model: str, objective: str | None, ratio: float | None) -> dict[str, Any] | None:
    """The paper's Table 2 row for (model, objective, ratio), or None. Names compare case-insensitively."""
    for row in PAPER_TABLE2:
        if row["model"].lower() != str(model).lower():
            continue
        if row["objective"] is not None and (_missing(objective) or row["objective"].lower() != str(objective).lower()):
            continue
        if row["ratio"] is not None and (_missing(ratio) or not math.isclose(row["ratio"], float(ratio),
                                                                             rel_tol=0, abs_tol=1e-9)):
            continue
        return row
    return None


def assemble_table2(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """One row per evaluated model, columns exactly ``TABLE2_COLUMNS``; paper columns from ``PAPER_TABLE2``.

    Each input row needs ``model``; the other input columns are optional (empty when absent).
    Unknown keys, or paper columns given by the caller, raise ValueError.
    """
    records = []
    for number, row in enumerate(rows, start=1):
        unknown = set(row) - set(INPUT_COLUMNS)
        if unknown:
            raise ValueError(f"row {number}: unknown column(s) {sorted(unknown)}; allowed: {INPUT_COLUMNS}")
        if "model" not in row:
            raise ValueError(f"row {number}: no 'model'")
        record = {column: row.get(column) for column in INPUT_COLUMNS}
        paper = paper_row(row["model"], row.get("objective"), row.get("ratio"))
        record["paper_PI"] = paper["PI"] if paper else None
        record["paper_RR"] = paper["RR"] if paper else None
        records.append(record)
    return pd.DataFrame.from_records(records, columns=TABLE2_COLUMNS)


def with_gates(record: dict[str, Any], gate: dict[str, Any] | None) -> dict[str, Any]:
    """A row's record with its sanity-gate columns (``multivec.nugget.gates.dev_loss_gate``; None: untrained)."""
    if gate is None:
        return record
    return {**record, **{column: gate[column] for column in ("best_dev_loss", "unigram_nats", "gate")}}


def _cell(value, column: str) -> str:
    if _missing(value):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if column in ("paper_PI", "paper_RR"):
        return f"{float(value):.2f}"
    if column == "vectors_per_doc":
        return f"{float(value):.1f}"
    if column in ("n_queries_PI", "n_queries_RR", "train_steps"):
        return str(int(value))
    if column in ("best_dev_loss", "unigram_nats"):
        return f"{float(value):.3f}"
    return str(value)


def truncation_lines(metrics: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """Markdown lines saying, per task, what the encoders' input length cut (``metrics[row][task]["truncation"]``).

    Rows that read the same encodings or cut the same way are reported once; rows without vectors (BM25)
    read whole documents and are not listed.
    """
    lines = []
    for task in sorted({t for per_task in metrics.values() for t in per_task}):
        groups: dict[tuple, list[str]] = {}
        for row, per_task in metrics.items():
            cut = per_task.get(task, {}).get("truncation")
            if cut is None:
                continue
            key = (cut["max_tokens"], cut["truncated_documents"], cut["documents"], cut["tokens_lost"], cut["tokens"])
            groups.setdefault(key, []).append(row)
        parts = []
        for (max_tokens, cut_docs, docs, lost, tokens), rows in groups.items():
            who = "every encoder" if len(groups) == 1 else ", ".join(rows)
            parts.append(f"{cut_docs} of {docs} documents truncated at {max_tokens} tokens, "
                         f"{100 * cut_docs / docs if docs else 0:.1f}% of documents and "
                         f"{100 * lost / tokens if tokens else 0:.2f}% of tokens lost ({who})")
        if parts:
            lines.append(f"- {task.upper()}: " + "; ".join(parts) + ".")
    if lines:
        lines.insert(0, "Encoder input: whole documents up to each encoder's position limit unless configured "
                        "shorter (`table2.max_tokens`); BM25 reads whole documents. What the limit still cut:")
    return lines


def table2_markdown(df: pd.DataFrame, scale_line: str, notes: Sequence[str] = (),
                    statistics_note: str | None = None) -> str:
    """The table; PI and RR cells as ``mean [lo, hi] ±sd`` when ``df`` has their statistics columns."""
    from multivec.statistics import estimate_cell

    lines = ["# NUGGET Table 2 reproduction", "", scale_line.strip(), "",
             "MRR×100 over 20 candidates (ties pessimistic). PI: paraphrase identification; RR: passage "
             "reranking. paper_*: the published value for the same model/objective/ratio "
             f"({PAPER_SOURCE}); empty where we have none.", ""]
    if statistics_note:
        lines += [statistics_note, ""]
    lines += markdown_table(TABLE2_COLUMNS, ([estimate_cell(record, c) if c in METRICS else _cell(record[c], c)
                                            for c in TABLE2_COLUMNS] for record in df.to_dict("records")))
    steps = []
    for record in df.to_dict("records"):
        if _missing(record["train_steps"]):
            continue
        label = " ".join(str(x) for x in (record["model"], record["objective"]) if not _missing(x))
        if not _missing(record["ratio"]):
            label += f" r={record['ratio']}"
        steps.append(f"{label}: {int(record['train_steps'])} steps")
    if steps:
        lines += ["", "Training: " + "; ".join(steps) + "."]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


def write_table2(df: pd.DataFrame, csv_path: str | os.PathLike, md_path: str | os.PathLike, scale_line: str,
                 notes: Sequence[str] = (), statistics_note: str | None = None) -> None:
    """Write the table as CSV and as markdown headed by ``scale_line`` (scale, data, base model) and
    followed by ``notes`` (markdown lines, e.g. ``truncation_lines``, the comparisons and the claims).
    ``df`` has Table 2's columns, optionally with the statistics columns (``TableStatistics.add_columns``)."""
    missing = [c for c in TABLE2_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"columns {list(df.columns)} lack Table 2's {missing}")
    for path in (csv_path, md_path):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(csv_path, index=False)
    Path(md_path).write_text(table2_markdown(df, scale_line, notes, statistics_note), encoding="utf-8")
