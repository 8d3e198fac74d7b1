"""NUGGET Table 1 (§6.1.1, Appendix A): size and lengths of the two Table 2 tasks, ours beside the paper's.

Per task: the number of queries, the mean query length and the mean document length, in
whitespace tokens (the released PI set is pre-tokenised, so whitespace tokens are its tokens).
The mean document length is taken over the distinct candidate documents of the task (each
document once, however many queries list it): on the paper's released PI dev set this gives
the published 242.1 (and the query mean its 241.3), while the mean over (query, candidate)
pairs gives 246.4.

``unknown_token_share``: the share of the task documents' tokens that are the encoder tokenizer's
unknown token (``multivec.data.unknown_tokens``, read from each task's ``meta.json``), with the
tokenizer in ``unknown_tokenizer`` and whether it exceeds ``data.max_unknown_share`` in
``unknown_over_threshold``. The paper's tasks read raw text (no ``<unk>``); the demo's RR reads
tokenised WikiText-2, whose masked words no detokenisation restores.

``PAPER_TABLE1`` is copied from the paper's Table 1; it fills only the ``paper_*`` columns.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from multivec.io.markdown_table import markdown_table
from multivec.tasks.ranking_task import RankingTask

PAPER_SOURCE = "Qin & Van Durme, NUGGET, ICML 2023, Table 1"

PAPER_TABLE1: dict[str, dict[str, Any]] = {
    "PI": {"corpus": "ParaBank", "n_queries": 1024, "mean_query_tokens": 241.3, "mean_document_tokens": 242.1},
    "RR": {"corpus": "WikiText-103", "n_queries": 1024, "mean_query_tokens": 287.0, "mean_document_tokens": 333.8},
}

# What our tasks are built from, by config source (table2.pi.source, table2.rr.source).
SOURCE_LABELS = {"released": "ParaBank (the paper's released dev set)", "parabank": "ParaBank v1.0 (rebuilt)",
                 "wikitext2": "WikiText-2 valid+test", "wikitext103": "WikiText-103 train"}

STATISTICS = ["n_queries", "mean_query_tokens", "mean_document_tokens"]
UNKNOWN_COLUMNS = ["unknown_token_share", "unknown_tokenizer", "unknown_over_threshold"]
TABLE1_COLUMNS = ["task", "corpus", *STATISTICS, "n_documents", *UNKNOWN_COLUMNS, "paper_corpus",
                  *(f"paper_{s}" for s in STATISTICS)]
UNKNOWN_KEYS = ("tokenizer", "share", "max_share")  # of a task meta.json's "unknown_tokens"


def whitespace_tokens(text: str) -> int:
    return len(text.split())


def task_statistics(task: RankingTask) -> dict[str, Any]:
    """Queries, mean query length and mean length of the distinct candidate documents (whitespace tokens)."""
    if not task.queries:
        raise ValueError("a task without queries has no Table 1 statistics")
    candidates = list(dict.fromkeys(c for query in task.queries for c in query.candidates))
    query_lengths = [whitespace_tokens(task.documents[q.source]) for q in task.queries]
    document_lengths = [whitespace_tokens(task.documents[c]) for c in candidates]
    return {
        "n_queries": task.n_queries,
        "mean_query_tokens": sum(query_lengths) / len(query_lengths),
        "mean_document_tokens": sum(document_lengths) / len(document_lengths),
        "n_documents": len(candidates),
    }


def unknown_tokens_of(meta: dict, where: str) -> dict:
    """The ``unknown_tokens`` block of a task's ``meta.json`` (``where`` names the file in errors)."""
    block = meta.get("unknown_tokens")
    if not isinstance(block, dict) or any(k not in block for k in UNKNOWN_KEYS):
        raise ValueError(f"{where}: no 'unknown_tokens' block with {', '.join(UNKNOWN_KEYS)} (a task built before "
                         f"unknown tokens were counted? rebuild it)")
    return block


def assemble_table1(tasks: dict[str, tuple[str, RankingTask]], unknown: dict[str, dict] | None = None) -> pd.DataFrame:
    """``tasks``: task name (``pi``/``rr``, any case) -> (its config source, e.g. ``wikitext2``, or a label; the task).
    ``unknown``: task name -> its ``meta.json`` ``unknown_tokens`` block (``unknown_tokens_of``); None leaves
    the unknown-token columns empty."""
    records = []
    for name, (corpus, task) in tasks.items():
        paper = PAPER_TABLE1.get(name.upper(), {})
        block = (unknown or {}).get(name)
        shares = ({"unknown_token_share": float(block["share"]), "unknown_tokenizer": block["tokenizer"],
                   "unknown_over_threshold": bool(block["share"] > block["max_share"])} if block is not None
                  else dict.fromkeys(UNKNOWN_COLUMNS))
        record = {"task": name.upper(), "corpus": SOURCE_LABELS.get(corpus, corpus), **task_statistics(task),
                  **shares, "paper_corpus": paper.get("corpus")}
        record.update({f"paper_{s}": paper.get(s) for s in STATISTICS})
        records.append(record)
    return pd.DataFrame.from_records(records, columns=TABLE1_COLUMNS)


def _cell(value, column: str) -> str:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return ""
    if column.endswith("_tokens"):
        return f"{float(value):.1f}"
    if column == "unknown_token_share":
        return f"{100 * float(value):.2f}%"
    if column == "unknown_over_threshold":
        return "yes" if value else "no"
    return str(int(value)) if column.endswith(("n_queries", "n_documents")) else str(value)


def table1_markdown(df: pd.DataFrame) -> str:
    lines = ["# NUGGET Table 1: task statistics", "",
             "Queries, mean query length and mean document length (distinct candidate documents) in whitespace "
             f"tokens; paper_*: {PAPER_SOURCE}. unknown_token_share: the share of the task documents' tokens "
             "(unknown_tokenizer's) that are its unknown token; unknown_over_threshold: above data.max_unknown_share "
             "(the build warned). The paper reads raw text, without unknown tokens.", "",
             *markdown_table(TABLE1_COLUMNS, ([_cell(record[c], c) for c in TABLE1_COLUMNS]
                                              for record in df.to_dict("records")))]
    return "\n".join(lines) + "\n"


def write_table1(df: pd.DataFrame, csv_path: str | os.PathLike, md_path: str | os.PathLike) -> None:
    if list(df.columns) != TABLE1_COLUMNS:
        raise ValueError(f"columns {list(df.columns)} are not Table 1's {TABLE1_COLUMNS}")
    for path in (csv_path, md_path):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(csv_path, index=False)
    Path(md_path).write_text(table1_markdown(df), encoding="utf-8")
