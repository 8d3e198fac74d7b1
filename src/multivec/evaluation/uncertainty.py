"""Per-unit scores of NUGGET's ranking tables and their uncertainty in every NUGGET results table.

Tables 2 and 4 (NUGGET §6.1, §7.1) report MRR×100 over a task's queries. A query's unit value is
100 / rank of its answer (pessimistic ties, ``multivec.metrics.ranking``), read from the per-query
rankings the evaluation writes (``results/.../<task>.rankings.jsonl``, ``rank_of_answer``); their mean
is the row's MRR×100 exactly. ``ranking_measurements`` turns those files into ``Measurement``\\ s
(statistic ``mean``; the unit is the query's position and source document, ``"<k>:<source>"``).

Every NUGGET table then gets the same statistics (``multivec.statistics``): ``table_with_statistics``
adds ``<metric>_lo``/``_hi``/``_sd`` and ``n_seeds`` beside its metric columns (the metric replaced by
its seed mean), ``write_tests`` writes the declared comparisons (``results/<table>_tests.csv``),
``estimate_cell`` renders a metric cell as ``mean [lo, hi] ±sd`` for the Markdown, and
``statistics_lines`` gives the Markdown's closing sections: the comparisons and the claims' verdicts.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from multivec.statistics import Measurement, TableStatistics, format_estimate, read_units, table_statistics

RANKING_METRICS = {"pi": "PI", "rr": "RR"}  # task -> the table's metric column


def query_reciprocal_ranks(path: str | os.PathLike) -> tuple[list[str], list[float]]:
    """Units (``"<k>:<source>"``) and 100 / rank of the answer of every query of a rankings JSONL."""
    from multivec.io import iter_jsonl

    units, values = [], []
    for line, row in iter_jsonl(path):
        rank = row.get("rank_of_answer")
        if not isinstance(rank, int) or rank < 1:
            raise ValueError(f"{path}:{line}: rank_of_answer must be an integer >= 1, got {rank!r}")
        units.append(f"{len(units)}:{row.get('source', '')}")
        values.append(100.0 / rank)
    if not units:
        raise ValueError(f"{path}: no query rankings")
    return units, values


def ranking_measurements(files: Sequence[tuple[str | os.PathLike, str, int | None, str]],
                         metrics: Mapping[str, str] = RANKING_METRICS) -> list[Measurement]:
    """One ``mean`` Measurement of per-query 100/rank per ``(rankings path, row, seed, task)``; the
    task names the metric (``metrics``: PI, RR)."""
    out = []
    for path, row, seed, task in files:
        if task not in metrics:
            raise ValueError(f"{path}: task {task!r} has no metric; known: {sorted(metrics)}")
        units, values = query_reciprocal_ranks(path)
        out.append(Measurement(row, metrics[task], "mean", units, values, None if seed is None else int(seed)))
    return out


def compute_table_statistics(units: str | os.PathLike, comparisons: Sequence[dict] | None,
                             settings: Mapping[str, Any]) -> TableStatistics:
    """The table's statistics from its unit file; ``settings``: the rule's ``statistics_params()``."""
    return table_statistics(read_units(units), comparisons, alpha=settings["alpha"],
                            confidence=settings["confidence"], n_resamples=settings["bootstrap_resamples"],
                            n_permutations=settings["permutation_resamples"])


def table_with_statistics(frame: pd.DataFrame, stats: TableStatistics, row_column: str,
                          metrics: Sequence[str]) -> pd.DataFrame:
    """``frame`` with each metric the seed mean, followed by ``_lo``, ``_hi``, ``_sd``; plus ``n_seeds``.
    Every (row, metric) of the frame must be measured: a missing one raises ValueError."""
    measured = set(zip(stats.summary["row"], stats.summary["metric"]))
    missing = [(r, m) for r in frame[row_column] for m in metrics if (r, m) not in measured]
    if missing:
        raise ValueError(f"no per-unit scores for (row, metric) {missing[:4]}; measured rows: "
                         f"{sorted({r for r, _ in measured})}")
    return stats.add_columns(frame, row_column, list(metrics))


def write_tests(stats: TableStatistics, path: str | os.PathLike) -> None:
    """The table's comparisons (``TableStatistics.tests``) as CSV (header only when none is declared)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    stats.tests.to_csv(path, index=False)


def _missing(value) -> bool:
    return value is None or (not isinstance(value, (str, bytes)) and bool(pd.isna(value)))


def estimate_cell(record: Mapping[str, Any], column: str, digits: int = 2) -> str:
    """A metric cell as ``mean [lo, hi] ±sd`` when the record has ``<column>_lo``/``_hi`` (sd only with
    several seeds); else the value with ``digits`` decimals; empty when missing."""
    value = record.get(column)
    if _missing(value):
        return ""
    lo, hi, sd = (record.get(f"{column}{s}") for s in ("_lo", "_hi", "_sd"))
    return format_estimate(float(value), None if _missing(lo) else float(lo), None if _missing(hi) else float(hi),
                           None if _missing(sd) else float(sd), digits)


def statistics_note(confidence: float, seeds: Sequence[int], unit: str) -> str:
    """One Markdown line saying how to read the metric cells (``unit``: what the bootstrap resamples)."""
    return (f"Cells: seed mean [{confidence:.0%} percentile-bootstrap CI over {unit}, pooled across seeds] "
            f"±seed-to-seed SD (only with several seeds); training seeds: {', '.join(map(str, seeds))}.")


def statistics_lines(stats: TableStatistics, claims_file: str | os.PathLike | None,
                     units: Mapping[str, str | os.PathLike], claims: Mapping[str, Any] | None) -> list[str]:
    """The Markdown's closing sections: the declared comparisons, then the verdicts of the claims whose
    references lie in ``units``' tables (``claims``: the rule's ``claims_params()``)."""
    lines = []
    tests = stats.markdown_tests()
    if tests:
        lines += ["", *tests]
    if claims_file is not None and claims is not None:
        from multivec.statistics.claims import verdict_lines

        verdicts = verdict_lines(claims_file, dict(units), scale=claims["scale"], skip=claims.get("skip") or {},
                                 alpha=claims["alpha"], confidence=claims["confidence"],
                                 n_resamples=claims["bootstrap_resamples"],
                                 n_permutations=claims["permutation_resamples"])
        if verdicts:
            lines += ["", *verdicts]
    return lines
