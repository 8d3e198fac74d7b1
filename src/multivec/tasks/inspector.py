"""Inspectors for Table 2's ranking tasks (NUGGET §6.1, Appendix A), as ``ranking_task.py`` writes
them in the NUGGET release format: a folder with ``docs.txt`` (``id<TAB>text``) and ``task.jsonl``
(``source``, 20 ``candidates``, ``answer`` index).

An empty document that is present in ``docs.txt`` (the released PI dev set has two, L873 and
L874, kept as ``''`` so the set keeps its 1024 queries) is reported as empty and counted,
never as missing; only ids absent from ``docs.txt`` are missing.
"""

from __future__ import annotations

import logging
import re
from contextlib import contextmanager
from pathlib import Path

from multivec.inspection.common import (Report, format_summary, is_dir_with, jsonl_first_row_has, length_summary,
                                        load_rows_checked, print_field_stats, short, text_field_stats)
from multivec.inspection.registry import inspector
from multivec.io import iter_lines, read_docs_tsv

TASK_ROW = {"source": str, "candidates": list, "answer": int}


def answer_in_range(row) -> str | None:
    """What is wrong with a row's ``answer`` index into its ``candidates`` (None when nothing is)."""
    if not 0 <= row["answer"] < len(row["candidates"]):
        return f"answer {row['answer']} is not an index into its {len(row['candidates'])} candidates"
    return None


@contextmanager
def _without_io_warnings():
    """``read_docs_tsv`` logs the empty documents it keeps; the inspector prints them itself."""
    logger = logging.getLogger("multivec.io")
    previous = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(previous)


def read_docs(path: Path) -> tuple[dict[str, str], list[str]]:
    """``docs.txt`` as ``{id: text}`` with empty documents kept as ``''``, and the empty ones' ids."""
    with _without_io_warnings():
        docs = read_docs_tsv(path, on_empty="keep")
    return docs, [doc_id for doc_id, text in docs.items() if not text]


def _documents_line(docs: dict[str, str], empty: list[str]) -> str:
    line = f"documents: {len(docs)}"
    if empty:
        shown = ", ".join(empty[:5]) + (", ..." if len(empty) > 5 else "")
        line += f" ({len(empty)} empty documents, kept as '': {shown})"
    return line


def _print_task(path: Path, docs_path: Path | None, report: Report) -> None:
    tasks = load_rows_checked(path, TASK_ROW, "task row", answer_in_range)
    report.line(f"queries: {len(tasks)}")
    report.line(f"candidates per query: {format_summary(length_summary([len(r['candidates']) for r in tasks]))}")
    if docs_path is None:
        report.line("docs.txt: absent (task ids only)")
        return
    docs, empty = read_docs(docs_path)
    report.line(_documents_line(docs, empty))
    nonempty = [text for text in docs.values() if text]
    report.line("document length (whitespace tokens, non-empty documents): "
                f"{format_summary(length_summary([len(t.split()) for t in nonempty]))}")
    referenced = {r["source"] for r in tasks} | {c for r in tasks for c in r["candidates"]}
    missing = referenced - docs.keys()
    if missing:
        report.line(f"WARNING: {len(missing)} ids in {path.name} are not in {docs_path.name}, "
                    f"e.g. {sorted(missing)[:3]}")
    used_empty = sorted(referenced & set(empty))
    if used_empty:
        report.line(f"note: {len(used_empty)} empty documents are used by queries: {', '.join(used_empty[:5])}")
    for row in tasks[:report.n]:
        answer = row["candidates"][row["answer"]]
        negative = next((c for c in row["candidates"] if c != answer), None)
        report.line(f"  query {row['source']}: {short(docs.get(row['source'], '?'))}")
        report.line(f"    answer {answer}: {short(docs.get(answer, '?'))}")
        if negative is not None:
            report.line(f"    negative {negative}: {short(docs.get(negative, '?'))}")


@inspector("ranking task", "a folder with docs.txt (id<TAB>text) + task.jsonl (source, candidates, answer)",
           is_dir_with("task.jsonl"), 80)
def inspect_task_folder(path: Path, report: Report) -> None:
    docs = path / "docs.txt"
    _print_task(path / "task.jsonl", docs if docs.is_file() else None, report)


@inspector("ranking task file", "task.jsonl rows: source, candidates, answer (docs.txt beside it is used if present)",
           jsonl_first_row_has("source", "candidates", "answer", without=("scores",)), 70)
def inspect_task_file(path: Path, report: Report) -> None:
    docs = path.with_name("docs.txt")
    _print_task(path, docs if docs.is_file() else None, report)


def _is_docs_tsv(path: Path) -> bool:
    if not (path.is_file() and path.suffix == ".txt"):
        return False
    if path.name == "docs.txt":
        return True
    for _, text in iter_lines(path):
        if text.strip():
            return bool(re.match(r"^[^\s\t]+\t\S", text))
    return False


@inspector("documents tsv", "docs.txt: one document a line, id<TAB>text", _is_docs_tsv, 60)
def inspect_docs_tsv(path: Path, report: Report) -> None:
    docs, empty = read_docs(path)
    report.line(_documents_line(docs, empty))
    rows = [{"id": k, "text": v} for k, v in docs.items() if v]
    report.line("lengths (non-empty documents):")
    print_field_stats(text_field_stats(rows, ["text"], report.load_tokenizer()), report)
    for doc_id, text in list(docs.items())[:report.n]:
        report.line(f"  {doc_id}: {short(text)}")
