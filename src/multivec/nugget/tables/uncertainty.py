"""Per-unit scores of NUGGET's ranking tables and their uncertainty in every NUGGET results table.

Tables 2 and 4 (NUGGET §6.1, §7.1) report MRR×100 over a task's queries. A query's unit value is
100 / rank of its answer (pessimistic ties, ``multivec.metrics.ranking``), read from the per-query
rankings the evaluation writes (``results/.../<task>.rankings.jsonl``, ``rank_of_answer``); their mean
is the row's MRR×100 exactly. ``ranking_measurements`` turns those files into ``Measurement``\\ s
(statistic ``mean``; the unit is the query's position and source document, ``ranking_task.query_unit_id``).

Every NUGGET table then gets the statistics of ``multivec.statistics`` (``TableStatistics.add_columns``,
``write_tests``, ``estimate_cell``), and ``statistics_lines`` gives the Markdown's closing sections: the
comparisons and the claims' verdicts.
"""

from __future__ import annotations

import os
from typing import Any, Mapping, Sequence


from multivec.statistics import Measurement, TableStatistics
from multivec.tasks.ranking_task import query_unit_id
from multivec.statistics.claims import table_verdict_lines

RANKING_METRICS = {"pi": "PI", "rr": "RR"}  # task -> the table's metric column


def query_reciprocal_ranks(path: str | os.PathLike) -> tuple[list[str], list[float]]:
    """Units (``"<k>:<source>"``) and 100 / rank of the answer of every query of a rankings JSONL."""
    from multivec.io import iter_jsonl

    units, values = [], []
    for line, row in iter_jsonl(path):
        rank = row.get("rank_of_answer")
        if not isinstance(rank, int) or rank < 1:
            raise ValueError(f"{path}:{line}: rank_of_answer must be an integer >= 1, got {rank!r}")
        units.append(query_unit_id(len(units), row.get("source", "")))
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


def statistics_lines(stats: TableStatistics, claims_file: str | os.PathLike | None,
                     units: Mapping[str, str | os.PathLike], claims: Mapping[str, Any] | None) -> list[str]:
    """The Markdown's closing sections: the declared comparisons, then the verdicts of the claims whose
    references lie in ``units``' tables (``claims``: the rule's ``claims_params()``)."""
    lines = []
    tests = stats.markdown_tests()
    if tests:
        lines += ["", *tests]
    verdicts = table_verdict_lines(claims_file, units, claims)
    if verdicts:
        lines += ["", *verdicts]
    return lines
