"""Generic inspectors: any JSON, JSONL, CSV, TSV, text or ``.safetensors`` file, and any folder.

They are the fallbacks (low priority) that make a new output, such as a counts sidecar
(``*.meta.json``) or a new results table (``results/*.csv``), display sensibly with no new
code; artifacts with a known layout have their own inspectors beside their writers.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from multivec.inspection.common import (Report, format_summary, has_suffix, length_summary, print_field_stats,
                                        read_json_checked, read_safetensors_header, read_table, schema, short,
                                        short_json, text_field_stats)
from multivec.inspection.registry import inspector, inspectors
from multivec.io import MalformedInputError, iter_lines, read_jsonl

GENERIC = 10
BINARY_FORMAT = 40
TEXT_SUFFIXES = (".txt", ".md", ".log", ".raw", ".cor", ".html")


@inspector("jsonl", "any other JSONL file: row count, schema, text-field lengths", has_suffix(".jsonl"), GENERIC)
def inspect_jsonl(path: Path, report: Report) -> None:
    rows = read_jsonl(path)
    report.line(f"rows: {len(rows)}")
    report.line(f"schema: {schema(rows)}")
    stats = text_field_stats(rows, tokenizer=report.load_tokenizer())
    if stats:
        report.line("lengths:")
        print_field_stats(stats, report)
    for row in rows[:report.n]:
        report.line(f"  {short_json(row, 300)}")


def describe_table(table, report: Report, max_rows: int = 40) -> None:
    """Shape, column types, the rows (first ``max_rows``) and, for longer tables, numeric ranges."""
    report.line(f"shape: {table.shape[0]} rows x {table.shape[1]} columns")
    report.line(f"columns: {', '.join(f'{c} ({t})' for c, t in table.dtypes.astype(str).items())}")
    report.table(table, index=False, max_rows=max_rows, max_cols=20)
    if len(table) > max_rows:
        numeric = table.select_dtypes("number")
        for column in numeric.columns:
            values = numeric[column].dropna()
            if len(values):
                report.line(f"  {column}: min={values.min():g} mean={values.mean():g} max={values.max():g}")


@inspector("csv table", "a CSV table (results tables, metrics.csv, ...)", has_suffix(".csv"), GENERIC)
def inspect_csv(path: Path, report: Report) -> None:
    describe_table(read_table(path, ","), report)


@inspector("tsv", "any other tab-separated file: a table, or ragged rows (e.g. ParaBank)", has_suffix(".tsv"), GENERIC)
def inspect_tsv(path: Path, report: Report) -> None:
    lines = [text for _, text in iter_lines(path) if text.strip()]
    widths = [len(text.split("\t")) for text in lines]
    if len(set(widths)) <= 1:
        describe_table(read_table(path, "\t"), report)
        return
    report.line(f"ragged rows: {len(lines)} non-blank lines; fields per line: {format_summary(length_summary(widths))}")
    for text in lines[:report.n]:
        report.line("  " + " | ".join(short(field, 100) for field in text.split("\t")))


@inspector("text", "a text file (.txt, .md, .log, .raw, .html): lines, bytes, a few lines", has_suffix(*TEXT_SUFFIXES),
           GENERIC)
def inspect_text(path: Path, report: Report) -> None:
    lines = [text for _, text in iter_lines(path)]
    nonblank = [t for t in lines if t.strip()]
    report.line(f"lines: {len(lines)} ({len(nonblank)} non-blank)  bytes: {path.stat().st_size:,}  "
                f"whitespace tokens: {sum(len(t.split()) for t in lines):,}")
    report.line(f"tokens per non-blank line: {format_summary(length_summary([len(t.split()) for t in nonblank]))}")
    for text in nonblank[:report.n]:
        report.line(f"  {short(text)}")


def describe_json(value, report: Report, limit: int = 40) -> None:
    """Any JSON value: an object key by key (a flat sub-object as ``k=v`` pairs), an array's first items."""
    if isinstance(value, dict):
        report.line(f"object with {len(value)} keys: {', '.join(map(str, list(value)[:30]))}")
        for key, item in list(value.items())[:limit]:
            if isinstance(item, dict) and item and all(not isinstance(v, (dict, list)) for v in item.values()):
                report.line(f"  {key}: " + short(", ".join(f"{k}={v}" for k, v in item.items()), 300))
            elif isinstance(item, list) and len(item) > 5:
                kinds = sorted({type(v).__name__ for v in item})
                report.line(f"  {key}: list of {len(item)} ({'|'.join(kinds)}): {short_json(item[:5], 160)}")
            else:
                report.line(f"  {key}: {short_json(item)}")
        if len(value) > limit:
            report.line(f"  ... {len(value) - limit} more keys")
    elif isinstance(value, list):
        report.line(f"array of {len(value)} items; first {min(report.n, len(value))}:")
        for item in value[:report.n]:
            report.line(f"  {short_json(item, 300)}")
    else:
        report.line(f"{type(value).__name__}: {short(json.dumps(value))}")


@inspector("json", "a JSON file (info, metrics, counts sidecars, ...): structure and contents",
           has_suffix(".json"), GENERIC)
def inspect_json(path: Path, report: Report) -> None:
    describe_json(read_json_checked(path), report)


@inspector("safetensors", "a weights file: tensors, shapes, dtypes, parameter count", has_suffix(".safetensors"),
           BINARY_FORMAT)
def inspect_safetensors(path: Path, report: Report) -> None:
    header = read_safetensors_header(path)
    total = sum(math.prod(entry["shape"]) for entry in header.values())
    dtypes = sorted({entry["dtype"] for entry in header.values()})
    report.line(f"tensors: {len(header)}  parameters: {total:,}  dtypes: {dtypes}  bytes: {path.stat().st_size:,}")
    for name in sorted(header)[:max(report.n, 10)]:
        report.line(f"  {name}: {list(header[name]['shape'])} {header[name]['dtype']}")
    if len(header) > max(report.n, 10):
        report.line(f"  ... {len(header) - max(report.n, 10)} more tensors (--n to show more)")


def _kind_of(child: Path) -> str:
    try:
        for candidate in inspectors():
            if candidate.name != "folder" and candidate.matches(child):
                return candidate.name
    except MalformedInputError as err:  # shown in the listing; inspecting the entry gives the full error
        return f"unreadable: {err}"
    return "folder" if child.is_dir() else "unknown"


@inspector("folder", "any other folder: what each entry in it is", lambda p: p.is_dir(), 0)
def inspect_folder(path: Path, report: Report, limit: int = 50) -> None:
    children = sorted(path.iterdir())
    files = sum(1 for c in children if c.is_file())
    report.line(f"entries: {len(children)} ({files} files, {len(children) - files} folders)")
    for child in children[:limit]:
        size = f"{child.stat().st_size:,} bytes" if child.is_file() else f"{sum(1 for _ in child.iterdir())} entries"
        report.line(f"  {child.name}{'/' if child.is_dir() else ''}: {_kind_of(child)} ({size})")
    if len(children) > limit:
        report.line(f"  ... {len(children) - limit} more")
