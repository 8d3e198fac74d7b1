"""Inspectors for what running the DAG leaves beside the results: Snakemake ``benchmark:`` files
(``benchmarks/rules/**.tsv``: time and memory per job) and the rules' logs (``logs/**.log``,
written through ``script_support.rule_logging``). No paper equation: these measure the pipeline.
"""

from __future__ import annotations

import re
from pathlib import Path

from multivec.inspection.common import Report, read_table, short
from multivec.inspection.registry import inspector
from multivec.io import iter_lines

SNAKEMAKE_BENCHMARK_COLUMNS = ("s", "h:m:s", "max_rss")


def is_benchmark(path: Path) -> bool:
    if not (path.is_file() and path.suffix == ".tsv"):
        return False
    for _, text in iter_lines(path):
        return tuple(text.split("\t")[:3]) == SNAKEMAKE_BENCHMARK_COLUMNS
    return False


@inspector("snakemake benchmark", "a rule's benchmark .tsv (s, h:m:s, max_rss, ... per run)", is_benchmark, 70)
def inspect_benchmark(path: Path, report: Report) -> None:
    table = read_table(path, "\t")
    report.line(f"runs: {len(table)}  columns: {', '.join(map(str, table.columns))}")
    if len(table):
        seconds, rss = table["s"], table["max_rss"]
        report.line(f"wall seconds: mean={seconds.mean():.2f} max={seconds.max():.2f}; "
                    f"max_rss MB: {rss.max() if rss.dtype.kind in 'if' else rss.iloc[0]}")
    report.table(table, index=False, max_rows=40)


def _benchmark_files(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*.tsv") if is_benchmark(p)) if path.is_dir() else []


def is_benchmarks_folder(path: Path) -> bool:
    """A folder whose files, at any depth, are all Snakemake benchmarks (stops at the first other file)."""
    if not path.is_dir():
        return False
    found = False
    for file in path.rglob("*"):
        if file.is_file():
            if not is_benchmark(file):
                return False
            found = True
    return found


@inspector("snakemake benchmarks folder", "a folder of rule benchmarks (benchmarks/rules): time per rule",
           is_benchmarks_folder, 70)
def inspect_benchmark_folder(path: Path, report: Report) -> None:
    import pandas as pd

    from multivec.pipeline.rule_benchmarks import read_benchmark

    rows = []
    for file in _benchmark_files(path):
        table = read_table(file, "\t")
        parts = file.relative_to(path).parts
        # The extended format names the rule; a plain file is named after its first folder (a guess).
        named = read_benchmark(file)["rule_name"]
        rows.append({"rule": named or (parts[0] if len(parts) > 1 else file.stem),
                     "job": str(file.relative_to(path).with_suffix("")), "s": float(table["s"].iloc[-1]),
                     "max_rss_mb": float(table["max_rss"].iloc[-1]) if table["max_rss"].dtype.kind in "if" else None})
    jobs = pd.DataFrame(rows)
    per_rule = jobs.groupby("rule").agg(jobs=("s", "size"), total_s=("s", "sum"), max_s=("s", "max"),
                                        max_rss_mb=("max_rss_mb", "max")).sort_values("total_s", ascending=False)
    report.line(f"jobs: {len(jobs)}  total job seconds: {jobs['s'].sum():.0f} "
                "(wall time is less when jobs run in parallel)")
    report.table(per_rule.round(1))
    report.line()
    report.line("slowest jobs:")
    report.table(jobs.sort_values("s", ascending=False).head(max(report.n, 5))[["job", "s", "max_rss_mb"]].round(1),
                 index=False)


_LEVEL = re.compile(r"\b(DEBUG|INFO|WARNING|ERROR|CRITICAL)\b")
_OUTCOME = re.compile(r"multivec\.rule: (done in|failed after) ([0-9.]+) s")


@inspector("rule log", "a rule's log (logs/**.log): outcome, warnings and errors, the last lines",
           lambda p: p.is_file() and p.suffix == ".log", 60)
def inspect_log(path: Path, report: Report) -> None:
    lines = [text for _, text in iter_lines(path)]
    levels: dict[str, int] = {}
    for text in lines:
        match = _LEVEL.search(text)
        if match:
            levels[match.group(1)] = levels.get(match.group(1), 0) + 1
    outcome = next((m for m in map(_OUTCOME.search, reversed(lines)) if m), None)
    report.line(f"lines: {len(lines)}  bytes: {path.stat().st_size:,}  "
                + ("  ".join(f"{k}: {v}" for k, v in sorted(levels.items())) or "no logging levels"))
    if outcome:
        report.line(f"outcome: {'succeeded' if outcome.group(1) == 'done in' else 'FAILED'} "
                    f"after {float(outcome.group(2)):.1f} s")
    if any(text.startswith("Traceback") for text in lines):
        report.line("contains a traceback")
    for text in [t for t in lines if re.search(r"\b(WARNING|ERROR|CRITICAL)\b", t)][:report.n]:
        report.line(f"  ! {short(text, 300)}")
    report.line(f"last {min(report.n, len(lines))} lines:")
    for text in lines[-report.n:]:
        report.line(f"  {short(text, 300)}")
