"""NUGGET Table 4 (§7.1): the ablations, scored like Table 2 (PI and RR, MRR×100 over 20 candidates).

One row per configuration of ``multivec.nugget.configuration.TABLE4_ABLATIONS``; the row's r, l
(this encoder's scorer layer, and the paper's l it stands for), frozen bottom, selector and feedback
are read from the trained model's saved config, never from the row's name. ``PAPER_TABLE4`` holds the
paper's numbers, copied from the paper's text (``nugget_qin_vandurme_icml2023.txt``, Table 4); they
fill only ``paper_pi``/``paper_rr``. The random selector and token pooling (Table 2's token-pooling run
at r = 0.1) are not in the paper: their paper columns stay empty. The Markdown names the measured r_sb beside the paper's 0.033.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from multivec.io.markdown_table import markdown_table
from multivec.nugget.configuration import PAPER_SENTENCE_RATIO, TABLE4_ABLATIONS, TABLE4_DEFAULTS

PAPER_SOURCE = "Qin & Van Durme, NUGGET, ICML 2023, Table 4"
# name -> (the paper's configuration label, PI, RR); "random" has no paper row.
PAPER_TABLE4: dict[str, tuple[str, float, float]] = {
    "nugget_l3": ("NUGGET (l = 3)", 96.69, 50.04),
    "nugget_l0": ("NUGGET (l = 0)", 69.82, 29.20),
    "nugget_l6": ("NUGGET (l = 6)", 93.24, 48.84),
    "nugget_l9": ("NUGGET (l = 9)", 84.03, 47.36),
    "no_feedback": ("No feedback", 96.29, 49.81),
    "chunking": ("Chunking", 95.56, 42.41),
    "nugget_r_sb": ("NUGGET (r = 0.033)", 89.07, 49.49),
    "sentence_boundary": ("Sentence boundary", 87.91, 38.40),
}
LABELS = {**{name: label for name, (label, _, _) in PAPER_TABLE4.items()},
          "nugget_r_sb": "NUGGET (r = r_sb)", "random": "Random selector (not in the paper)",
          "token_pooling": "Token pooling (not in the paper)"}
TOKEN_POOLING_ROW = "token_pooling"  # Table 2's token-pooling run at Table 4's r, under this row name

METRICS = ["PI", "RR"]  # with the statistics, each is followed by <metric>_lo, _hi, _sd (multivec.statistics)
TABLE4_COLUMNS = ["name", "configuration", "selector", "paper_l", "l", "frozen_bottom", "r", "feedback", "PI", "RR",
                  "paper_pi", "paper_rr", "nuggets_per_doc_pi", "nuggets_per_doc_rr", "train_steps", "best_dev_loss",
                  "unigram_nats", "gate"]
# unigram_nats / gate: the sanity gate (multivec.nugget.gates): a row's best dev loss must be below the
# unigram entropy of its dev targets; "ok", or "FAILED: ..." naming both numbers.


def table4_record(name: str, model_config: dict[str, Any], metrics: dict[str, dict[str, Any]],
                  training: dict[str, Any] | None, gate: dict[str, Any] | None = None) -> dict[str, Any]:
    """One row from the model's saved ``config.json`` (its ``nugget`` fields), the per-task metrics
    (``results/nugget_table4/<name>/<task>.json``), its training summary and its sanity gate
    (``multivec.nugget.gates.dev_loss_gate``)."""
    if name not in TABLE4_ABLATIONS:
        raise ValueError(f"unknown Table 4 row {name!r}; known: {', '.join(TABLE4_ABLATIONS)}")
    for task in ("pi", "rr"):
        if task not in metrics or "mrr" not in metrics[task]:
            raise ValueError(f"Table 4 row {name!r}: no {task} metrics with 'mrr'")
    frozen = model_config.get("frozen_layers")
    paper = PAPER_TABLE4.get(name)
    return {
        "name": name,
        "configuration": LABELS[name],
        "selector": model_config["selector"],
        "paper_l": TABLE4_ABLATIONS[name].get("scorer_layer", TABLE4_DEFAULTS["scorer_layer"]),
        "l": model_config["scorer_layer"],
        "frozen_bottom": model_config["scorer_layer"] if frozen is None else frozen,
        "r": model_config["ratio"],
        "feedback": bool(model_config["feedback"]),
        "PI": metrics["pi"]["mrr"],
        "RR": metrics["rr"]["mrr"],
        "paper_pi": paper[1] if paper else None,
        "paper_rr": paper[2] if paper else None,
        "nuggets_per_doc_pi": metrics["pi"].get("vectors_per_doc"),
        "nuggets_per_doc_rr": metrics["rr"].get("vectors_per_doc"),
        "train_steps": training.get("train_steps") if training else None,
        # how much each ablation learned on its own objective (MT dev cross-entropy, nats per target token)
        "best_dev_loss": training.get("best_dev_loss") if training else None,
        "unigram_nats": gate["unigram_nats"] if gate else None,
        "gate": gate["gate"] if gate else None,
    }


def token_pooling_record(ratio: float, metrics: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Table 4's token-pooling row (Clavié et al. 2024): the base encoder's token states pooled by
    Ward clustering to k = ceil(n·r) vectors per document, scored by Table 2's evaluation (``metrics``: the
    per-task JSON of Table 2's ``token_pooling_r<r>`` run). No model: the model columns stay empty."""
    for task in ("pi", "rr"):
        if task not in metrics or "mrr" not in metrics[task]:
            raise ValueError(f"Table 4 row {TOKEN_POOLING_ROW!r}: no {task} metrics with 'mrr'")
    record = dict.fromkeys(TABLE4_COLUMNS)
    record.update({"name": TOKEN_POOLING_ROW, "configuration": LABELS[TOKEN_POOLING_ROW], "selector": "ward_pooling",
                   "r": ratio, "PI": metrics["pi"]["mrr"], "RR": metrics["rr"]["mrr"],
                   "nuggets_per_doc_pi": metrics["pi"].get("vectors_per_doc"),
                   "nuggets_per_doc_rr": metrics["rr"].get("vectors_per_doc")})
    return record


def assemble_table4(records: Sequence[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame.from_records(list(records), columns=TABLE4_COLUMNS)


def _cell(value, column: str) -> str:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if column in ("paper_pi", "paper_rr"):
        return f"{float(value):.2f}"
    if column.startswith("nuggets_per_doc"):
        return f"{float(value):.1f}"
    if column == "r":
        return f"{float(value):.4g}"
    if column in ("best_dev_loss", "unigram_nats"):
        return f"{float(value):.3f}"
    return str(value)


def table4_markdown(df: pd.DataFrame, header_lines: Sequence[str], share: dict[str, Any],
                    notes: Sequence[str] = ()) -> str:
    """The table (PI, RR as ``mean [lo, hi] ±sd`` when ``df`` has their statistics columns), r_sb, ``notes``."""
    from multivec.statistics import estimate_cell

    lines = ["# NUGGET Table 4 reproduction (ablations, §7.1)", "", *header_lines, "",
             "MRR×100 over 20 candidates, Table 2's evaluation. MT objective, r = 0.1 unless stated. "
             f"paper_*: {PAPER_SOURCE}; empty for the random selector and token pooling, which the paper lacks "
             "(token pooling: Table 2's Ward-pooled base-encoder states at this r, no model). paper_l: the "
             "paper's scorer layer (mBART, 12 layers); l: ours; frozen_bottom: the highest frozen layer.", ""]
    lines += markdown_table(TABLE4_COLUMNS, ([estimate_cell(record, c) if c in METRICS else _cell(record[c], c)
                                            for c in TABLE4_COLUMNS] for record in df.to_dict("records")))
    lines += ["", f"r_sb (share of sentence-final source tokens of the MT training corpus, measured with "
                  f"`{share['encoder']}`'s tokenizer, {share['documents']} documents, {share['tokens']} tokens): "
                  f"**{share['share']:.4f}**; the paper's: {PAPER_SENTENCE_RATIO}.", *notes]
    return "\n".join(lines) + "\n"


def write_table4(df: pd.DataFrame, csv_path: str | os.PathLike, md_path: str | os.PathLike,
                 header_lines: Sequence[str], share: dict[str, Any], notes: Sequence[str] = ()) -> None:
    """CSV and Markdown; ``df`` has Table 4's columns, optionally with the statistics columns
    (``TableStatistics.add_columns``); ``notes``: Markdown lines after the table (comparisons, claims)."""
    missing = [c for c in TABLE4_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"columns {list(df.columns)} lack Table 4's {missing}")
    for path in (csv_path, md_path):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(csv_path, index=False)
    Path(md_path).write_text(table4_markdown(df, header_lines, share, notes), encoding="utf-8")
