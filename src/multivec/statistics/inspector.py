"""Inspector of the statistics layer's per-unit files (``multivec.statistics.units``): rows,
metrics, seeds and units, and each (row, metric)'s seed-mean with its bootstrap CI recomputed."""

from __future__ import annotations

from pathlib import Path

from multivec.inspection.common import InspectError, Report, has_suffix
from multivec.inspection.registry import inspector


@inspector("unit scores", "per-unit scores of a table's rows (Parquet: row, metric, statistic, seed, unit, values)",
           has_suffix(".parquet"), 60)
def inspect_unit_scores(path: Path, report: Report) -> None:
    from multivec.statistics.resampling import bootstrap_ci, point_estimate
    from multivec.statistics.units import read_units, stack_seeds

    try:
        stacks = stack_seeds(read_units(path))
    except (ValueError, OSError) as err:
        raise InspectError(f"{path}: not a readable unit file: {err}") from None
    rows = sorted({row for row, _ in stacks})
    metrics = sorted({metric for _, metric in stacks})
    report.line(f"rows: {len(rows)}  metrics: {', '.join(metrics)}")
    for (row, metric), stack in sorted(stacks.items()):
        mean, sd = point_estimate(stack)
        lo, hi = bootstrap_ci(stack, n_resamples=500)
        seeds = "untrained" if stack.seeds == [None] else f"seeds {stack.seeds}"
        report.line(f"  {row} / {metric} ({stack.statistic}, {len(stack.units)} units, {seeds}): "
                    f"{mean:.3f} [{lo:.3f}, {hi:.3f}] (500 resamples)" + (f" ±{sd:.3f}" if sd == sd else ""))
