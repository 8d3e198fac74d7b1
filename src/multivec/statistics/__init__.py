"""The statistics layer: per-unit scores, bootstrap confidence intervals, paired randomization
tests, seed aggregation and the claims engine, shared by the three works.

- ``units``: ``Measurement`` (one metric of one row at one seed, kept per evaluation unit) and
  the long-format Parquet file every table's per-unit scores are written to.
- ``statistics``: the registry of statistics a metric is computed with (mean, ratio,
  perplexity, corpus BLEU, F1, pair correlations), each a function of summed unit components.
- ``clusters``: which cluster an evaluation unit belongs to (the document of a PropSegment query, the
  stream of an LM segment, the two documents of a Lee pair), the level the bootstrap and the tests resample.
- ``resampling``: the two-level bootstrap (clusters of units; training seeds as a random effect with a
  t-distributed seed term) for CIs and paired differences, the bootstrap test that inverts its CI, the
  cluster-level paired randomization test (one seed, mean statistics); Holm's correction.
- ``tables``: what a results table needs: per-(row, metric) mean, seed-to-seed SD and CI, and
  the declared row-vs-row comparisons with Holm-corrected p-values.
- ``claims``: paper claims as data (``config/claims.yaml``), with verdicts computed from units.

Names load on first use (PEP 562): the workflow imports light parts of this package (the claims file's
checks) while it parses, and numpy, pandas and scipy would otherwise cost every Snakemake start,
including each SLURM job's.
"""

from __future__ import annotations

from multivec.pipeline.lazy_exports import lazy_exports

_WHERE = {
    "bootstrap_ci": "resampling", "holm": "resampling", "paired_difference": "resampling",
    "paired_randomization_test": "resampling", "ratio_bootstrap_cis": "resampling",
    "BootstrapSettings": "resampling", "PairedDifference": "resampling", "point_estimate": "resampling",
    "unit_clusters": "clusters",
    "STATISTICS": "statistics", "compute_statistic": "statistics",
    "TableStatistics": "tables", "estimate_cell": "tables", "format_estimate": "tables", "statistics_note": "tables",
    "table_statistics": "tables", "table_statistics_from_units": "tables",
    "Measurement": "units", "SeedStack": "units", "read_units": "units", "stack_seeds": "units",
    "write_units": "units",
}

__all__ = sorted(_WHERE)

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
