"""The statistics layer: per-unit scores, bootstrap confidence intervals, paired randomization
tests, seed aggregation and the claims engine, shared by the three works.

- ``units``: ``Measurement`` (one metric of one row at one seed, kept per evaluation unit) and
  the long-format Parquet file every table's per-unit scores are written to.
- ``statistics``: the registry of statistics a metric is computed with (mean, ratio,
  perplexity, corpus BLEU, F1, pair correlations), each a function of summed unit components.
- ``resampling``: bootstrap confidence intervals over units (pooled across seeds) and the paired
  randomization test; Holm's correction.
- ``tables``: what a results table needs: per-(row, metric) mean, seed-to-seed SD and CI, and
  the declared row-vs-row comparisons with Holm-corrected p-values.
- ``claims``: paper claims as data (``config/claims.yaml``), with verdicts computed from units.
"""

from multivec.statistics.resampling import (
    bootstrap_ci,
    holm,
    paired_difference,
    paired_randomization_test,
)
from multivec.statistics.statistics import STATISTICS, compute_statistic
from multivec.statistics.tables import (TableStatistics, estimate_cell, format_estimate, statistics_note,
                                         table_statistics, table_statistics_from_units)
from multivec.statistics.units import Measurement, SeedStack, read_units, stack_seeds, write_units

__all__ = [
    "Measurement", "SeedStack", "STATISTICS", "TableStatistics", "bootstrap_ci", "compute_statistic",
    "estimate_cell", "format_estimate", "holm", "paired_difference", "paired_randomization_test", "read_units",
    "stack_seeds", "statistics_note", "table_statistics", "table_statistics_from_units", "write_units",
]
