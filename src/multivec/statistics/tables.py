"""What a results table needs from the statistics layer.

``table_statistics(measurements, comparisons)`` gives, for every (row, metric):
``mean`` (over seeds), ``sd`` (seed-to-seed, ddof 1; empty for one seed), ``lo``/``hi`` (95%
bootstrap CI over units pooled across seeds), ``n_seeds`` and ``n_units``; and for every declared
comparison (row A vs row B on each metric both have): A − B, its paired bootstrap CI, the paired
randomization p-value and the Holm-adjusted p-value over all of the table's tests.

Comparisons are declared per table in the configuration, ``statistics.comparisons.<table>``:
a list of ``{row: A, against: [B, ...], metrics: [optional subset]}``. A comparison naming a row
or metric that the table does not have raises ValueError naming it.

``TableStatistics.add_columns(frame, row_column)`` adds ``<metric>_lo``, ``<metric>_hi``,
``<metric>_sd`` and ``n_seeds`` beside each metric column of a table; ``tests`` is written as
``<table>_tests.csv``; ``markdown_tests()`` renders it.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from multivec.io.markdown_table import markdown_table
from multivec.statistics.resampling import (
    DEFAULT_PERMUTATIONS,
    DEFAULT_RESAMPLES,
    bootstrap_ci,
    holm,
    paired_difference,
    point_estimate,
)
from multivec.statistics.clusters import table_cluster_kind, table_of_units_file
from multivec.statistics.units import Measurement, SeedStack, read_units, stack_seeds

SUMMARY_COLUMNS = ["row", "metric", "statistic", "mean", "sd", "lo", "hi", "n_seeds", "n_units"]
TEST_COLUMNS = ["row", "against", "metric", "difference", "difference_lo", "difference_hi", "seed_sd", "p",
                "p_holm", "significant", "method"]


def normalise_comparisons(comparisons: Iterable[dict[str, Any]] | None) -> list[tuple[str, str, list[str] | None]]:
    """``[(A, B, metrics or None)]`` from the configuration's comparison entries."""
    pairs = []
    for number, entry in enumerate(comparisons or [], start=1):
        if not isinstance(entry, dict) or "row" not in entry or "against" not in entry:
            raise ValueError(f"comparison {number}: needs 'row' and 'against', got {entry!r}")
        against = entry["against"] if isinstance(entry["against"], list) else [entry["against"]]
        for other in against:
            pairs.append((str(entry["row"]), str(other), entry.get("metrics")))
    return pairs


@dataclass
class TableStatistics:
    summary: pd.DataFrame  # SUMMARY_COLUMNS
    tests: pd.DataFrame  # TEST_COLUMNS
    alpha: float
    stacks: dict[tuple[str, str], SeedStack]

    def estimate(self, row: str, metric: str) -> dict[str, Any]:
        match = self.summary[(self.summary["row"] == row) & (self.summary["metric"] == metric)]
        if match.empty:
            raise KeyError(f"no measurement of row {row!r}, metric {metric!r}")
        return match.iloc[0].to_dict()

    def add_columns(self, frame: pd.DataFrame, row_column: str = "row",
                    metrics: Sequence[str] | None = None, require: bool = False) -> pd.DataFrame:
        """``frame`` with each metric column replaced by the seed mean and followed by ``_lo``, ``_hi``,
        ``_sd``; plus ``n_seeds`` (the largest over the row's metrics). Rows without measurements
        keep their values and get empty statistics; with ``require``, a (row, metric) of the frame
        without per-unit scores raises ValueError instead."""
        metrics = list(metrics) if metrics is not None else sorted(set(self.summary["metric"]))
        if require:
            measured = set(zip(self.summary["row"], self.summary["metric"]))
            missing = [(r, m) for r in frame[row_column] for m in metrics if (r, m) not in measured]
            if missing:
                raise ValueError(f"no per-unit scores for (row, metric) {missing[:4]}; measured rows: "
                                 f"{sorted({r for r, _ in measured})}")
        out = frame.copy()
        index = {(r["row"], r["metric"]): r for r in self.summary.to_dict("records")}
        columns = list(out.columns)
        for metric in metrics:
            values = {suffix: [] for suffix in ("", "_lo", "_hi", "_sd")}
            for row in out[row_column]:
                record = index.get((row, metric))
                for suffix, key in (("", "mean"), ("_lo", "lo"), ("_hi", "hi"), ("_sd", "sd")):
                    values[suffix].append(record[key] if record else
                                          (out.loc[out[row_column] == row, metric].iloc[0]
                                           if suffix == "" and metric in out.columns else np.nan))
            anchor = columns.index(metric) + 1 if metric in columns else len(columns)
            out[metric] = values[""]
            for offset, suffix in enumerate(("_lo", "_hi", "_sd")):
                name = f"{metric}{suffix}"
                out[name] = values[suffix]
                if name in columns:
                    columns.remove(name)
                columns.insert(anchor + offset, name)
            if metric not in columns:
                columns.insert(anchor - 1, metric)
        seeds = self.summary.groupby("row")["n_seeds"].max().to_dict()
        out["n_seeds"] = [seeds.get(row, np.nan) for row in out[row_column]]
        if "n_seeds" not in columns:
            columns.append("n_seeds")
        return out[columns]

    def write_tests(self, path: str | os.PathLike) -> None:
        """The comparisons (``TEST_COLUMNS``) as ``results/<table>_tests.csv``; a header only when none
        is declared."""
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.tests.to_csv(path, index=False)

    def markdown_tests(self, digits: int = 2) -> list[str]:
        """Markdown lines: the comparisons with differences, CIs and p-values."""
        if self.tests.empty:
            return []
        methods = sorted(set(self.tests["method"])) if "method" in self.tests else []
        test = " or ".join({"randomization": "paired randomization test", "bootstrap": "paired bootstrap test (the CI "
                            "inverted: units, clusters and seeds resampled)"}.get(m, m) for m in methods) or "paired test"
        lines = [f"Paired comparisons ({test} over the same units; p Holm-corrected over the "
                 f"table's {len(self.tests)} tests; * = significant at α = {self.alpha}; the tests file names each "
                 "comparison's method):", ""]
        scale = self.summary.groupby("metric")["mean"].apply(lambda v: v.abs().max()).to_dict()
        rows = []
        for t in self.tests.to_dict("records"):
            star = " *" if t["significant"] else ""
            # Metrics on a 0-1 scale (correlations, shares) need a digit more than those on 0-100.
            d = digits + 1 if scale.get(t["metric"], 100.0) <= 1.0 else digits
            rows.append([f"{t['row']}", f"{t['against']}", f"{t['metric']}",
                         f"{t['difference']:+.{d}f} [{t['difference_lo']:+.{d}f}, {t['difference_hi']:+.{d}f}]",
                         format_p(t['p']), f"{format_p(t['p_holm'])}{star}"])
        return lines + markdown_table(["row", "vs", "metric", "difference [95% CI]", "p", "p (Holm)"], rows)


def format_p(p: float) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return ""
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}"


def format_estimate(mean: float, lo: float | None = None, hi: float | None = None, sd: float | None = None,
                    digits: int = 2) -> str:
    """``91.91 [90.10, 93.62]`` (± seed SD appended when there is one); empty for a missing mean."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return ""
    text = f"{mean:.{digits}f}"
    if lo is not None and hi is not None and not (math.isnan(lo) or math.isnan(hi)):
        text += f" [{lo:.{digits}f}, {hi:.{digits}f}]"
    if sd is not None and not math.isnan(sd):
        text += f" ±{sd:.{digits}f}"
    return text


def _missing(value) -> bool:
    return value is None or (not isinstance(value, (str, bytes)) and bool(pd.isna(value)))


def estimate_cell(record: Mapping[str, Any], column: str, digits: int = 2, missing: str = "") -> str:
    """A metric cell of a table row with statistics: ``mean [lo, hi] ±sd`` from ``<column>``,
    ``<column>_lo``/``_hi``/``_sd`` (the parts it has); ``missing`` when the row has no value."""
    value = record.get(column)
    if _missing(value):
        return missing
    lo, hi, sd = (record.get(f"{column}{s}") for s in ("_lo", "_hi", "_sd"))
    return format_estimate(float(value), None if _missing(lo) else float(lo), None if _missing(hi) else float(hi),
                           None if _missing(sd) else float(sd), digits)


def statistics_note(confidence: float, seeds: Sequence[int], unit: str) -> str:
    """One Markdown line saying how to read the metric cells (``unit``: what the bootstrap resamples)."""
    return (f"Cells: seed mean [{confidence:.0%} percentile-bootstrap CI over {unit} (whole clusters where units "
            f"cluster) and, with several seeds, over training seeds (a random effect)] ±seed-to-seed SD (only with "
            f"several seeds); training seeds: {', '.join(map(str, seeds))}.")


def table_statistics_from_units(units: str | os.PathLike, comparisons: Iterable[dict[str, Any]] | None,
                                settings: Mapping[str, Any]) -> "TableStatistics":
    """``table_statistics`` of a unit file, with a rule's ``statistics_params()`` (alpha, confidence,
    bootstrap_resamples, permutation_resamples)."""
    return table_statistics(read_units(units), comparisons, alpha=settings["alpha"],
                            confidence=settings["confidence"], n_resamples=settings["bootstrap_resamples"],
                            n_permutations=settings["permutation_resamples"],
                            clusters=table_cluster_kind(table_of_units_file(units)))


def table_statistics(measurements: Iterable[Measurement], comparisons: Iterable[dict[str, Any]] | None = None,
                     alpha: float = 0.05, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                     n_permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0,
                     clusters: str | None = None) -> TableStatistics:
    """Summaries of every (row, metric) and the declared comparisons, Holm-corrected within the table;
    ``clusters``: the cluster kind of the units (``multivec.statistics.clusters``; None: independent)."""
    stacks = stack_seeds(measurements, clusters=clusters)
    summary = []
    for (row, metric), stack in stacks.items():
        mean, sd = point_estimate(stack)
        lo, hi = bootstrap_ci(stack, confidence, n_resamples, seed)
        summary.append({"row": row, "metric": metric, "statistic": stack.statistic, "mean": mean, "sd": sd,
                        "lo": lo, "hi": hi, "n_seeds": stack.n_seeds, "n_units": len(stack.units)})
    rows = {row for row, _ in stacks}
    tests = []
    for a, b, metrics in normalise_comparisons(comparisons):
        for name in (a, b):
            if name not in rows:
                raise ValueError(f"comparison {a} vs {b}: the table has no row {name!r}; rows: {sorted(rows)}")
        shared = sorted({m for r, m in stacks if r == a} & {m for r, m in stacks if r == b})
        for metric in metrics or shared:
            if (a, metric) not in stacks or (b, metric) not in stacks:
                raise ValueError(f"comparison {a} vs {b}: metric {metric!r} is not measured for both rows")
            d = paired_difference(stacks[(a, metric)], stacks[(b, metric)], confidence, n_resamples,
                                  n_permutations, seed)
            tests.append({"row": a, "against": b, "metric": metric, "difference": d.difference,
                          "difference_lo": d.lo, "difference_hi": d.hi, "p": d.p,
                          "seed_sd": d.seed_sd, "method": d.method})
    tests_frame = pd.DataFrame.from_records(tests, columns=[c for c in TEST_COLUMNS if c not in ("p_holm", "significant")])
    tests_frame["p_holm"] = holm(tests_frame["p"].to_numpy()) if len(tests_frame) else []
    tests_frame["significant"] = tests_frame["p_holm"] < alpha
    return TableStatistics(pd.DataFrame.from_records(summary, columns=SUMMARY_COLUMNS), tests_frame[TEST_COLUMNS],
                           alpha, stacks)
