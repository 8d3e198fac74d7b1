"""The statistics of the distillation tables: per-unit scores in, CIs, comparisons and
claim verdicts out, shared by ``results/distill_teachers``, ``results/distill_table`` and
``results/distill_imdb``.

- ``embedding_measurements``: every (row, seed) entry's embeddings scored per evaluation unit
  (``multivec.distill.evaluation.demo_tasks.evaluate_units``) as ``multivec.statistics.Measurement``s, the
  content of ``results/units/<table>.<seedset>.parquet``;
- ``with_statistics``: a table frame whose metric columns become the seed mean with
  ``<metric>_lo``/``_hi`` (95% percentile bootstrap over units pooled across seeds), ``_sd``
  (seed-to-seed) and ``n_seeds`` (``multivec.statistics.TableStatistics.add_columns``), and the
  declared row-vs-row comparisons (paired randomization test, Holm within the table);
- ``markdown_lines``: the table with compact ``mean [lo, hi] ±sd`` cells, the comparisons and the
  verdicts of the claims on this table (``multivec.statistics.claims.verdict_lines``).
"""

from __future__ import annotations

import math
import os
from typing import Any, Callable, Mapping, Sequence

import pandas as pd

from multivec.io.markdown_table import markdown_table as table_lines
from multivec.statistics import Measurement, TableStatistics, estimate_cell, table_statistics_from_units
from multivec.statistics.claims import table_verdict_lines


def entry_folder(entry: Mapping[str, Any], task: str) -> str:
    """The embeddings folder of one (row, seed) entry for ``task``; KeyError naming the row and seed."""
    folder = entry["embeddings"].get(task)
    if folder is None:
        raise KeyError(f"distillation row {entry['name']!r} (seed {entry.get('seed')}): no embeddings "
                       f"for task {task!r}")
    return str(folder)


def embedding_measurements(entries: Sequence[Mapping[str, Any]], tasks: Sequence[str],
                           task_files: Mapping[str, Any],
                           evaluate_units: Callable[[str, str, Any], dict] | None = None) -> list[Measurement]:
    """``entries``: ``{"name", "seed" (None for an untrained row), "embeddings": {task: folder}}``, one per
    (row, seed). ``evaluate_units`` defaults to ``multivec.distill.evaluation.demo_tasks.evaluate_units``."""
    if evaluate_units is None:
        from multivec.distill.evaluation.demo_tasks import evaluate_units
    out = []
    for entry in entries:
        for task in tasks:
            for metric, scores in evaluate_units(task, entry_folder(entry, task), task_files[task]).items():
                out.append(Measurement(entry["name"], metric, scores.statistic, scores.units, scores.values,
                                       entry.get("seed")))
    return out


def with_statistics(frame: pd.DataFrame, row_column: str, metrics: Sequence[str], units: str | os.PathLike,
                    comparisons: Sequence[Mapping[str, Any]] | None,
                    statistics: Mapping[str, Any]) -> tuple[pd.DataFrame, TableStatistics]:
    """``frame`` with every metric from the unit file (seed mean, lo, hi, sd, n_seeds), and the statistics."""
    stats = table_statistics_from_units(units, comparisons, statistics)
    missing = sorted(set(frame[row_column]) - set(stats.summary["row"]))
    if missing:
        raise ValueError(f"{units}: no per-unit scores of row(s) {missing}")
    return stats.add_columns(frame, row_column, metrics), stats


def markdown_table(frame: pd.DataFrame, columns: Sequence[str], metric_digits: Mapping[str, int]) -> list[str]:
    """Markdown rows of ``columns``; a metric column (a key of ``metric_digits``) as ``mean [lo, hi] ±sd``."""
    rows = []
    for record in frame.to_dict("records"):
        cells = []
        for column in columns:
            if column in metric_digits:
                cells.append(estimate_cell(record, column, metric_digits[column], missing="–"))
            else:
                x = record.get(column)
                cells.append("–" if x is None or (isinstance(x, float) and math.isnan(x)) else
                             (f"{x:g}" if isinstance(x, float) else str(x)))
        rows.append(cells)
    return table_lines(columns, rows)


DEMO_UNITS = "Lee: documents, keeping the pairs among them; polarity: sentences; PI/RR: queries"


def statistics_note(stats: TableStatistics, confidence: float, units: str = DEMO_UNITS) -> str:
    """How to read a cell: what the CI resamples and how many seeds each row has."""
    seeds = sorted({int(n) for n in stats.summary["n_seeds"]})
    return (f"Cells: mean [{confidence:.0%} percentile-bootstrap CI over the evaluation units ({units}), "
            f"pooled across seeds] ± the "
            f"seed-to-seed SD where a row has several seeds ({'/'.join(map(str, seeds))} seed(s) per row).")


def claim_lines(claims_file: str | os.PathLike | None, units: Mapping[str, str | os.PathLike],
                claims: Mapping[str, Any] | None) -> list[str]:
    """The verdicts of the claims whose references lie in ``units``' tables (empty without a claims file)."""
    return table_verdict_lines(claims_file, units, claims)


def write_frame(frame: pd.DataFrame, path: str | os.PathLike, digits: int = 4) -> None:
    """A table with statistics as CSV: floats rounded to ``digits``, a missing value (one seed's SD) empty."""
    from pathlib import Path

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    frame.round(digits).to_csv(path, index=False)
