"""The rule "every results CSV has CIs", checked on the committed results: each results table or figure CSV
carries ``<metric>_lo``/``<metric>_hi`` beside its metrics, and every interval holds its point. Data audits,
task statistics and speed benchmarks measure no metric and are named as exceptions."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from multivec.statistics.claims import merge_claims, read_claims
from multivec.statistics.claims_file import claim_works, load_claims

REPO = Path(__file__).resolve().parents[1]
# not metrics over evaluation units: n-gram overlap audits, Table 1's task statistics, speed benchmarks, the
# distilled students' training curves, the per-rule run times
NO_METRIC = ("results/overlap.csv", "results/table1_tasks.csv", "results/benchmarks/", "results/experiments/",
             "results/distill_loss_curves.csv", "results/rule_benchmarks.csv")
RESULT_CSVS = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "results").rglob("*.csv"))


def test_results_are_committed():
    assert len(RESULT_CSVS) > 20 and "results/nugget_fig8_probability_gain_lengths.csv" in RESULT_CSVS


@pytest.mark.parametrize("path", [p for p in RESULT_CSVS if not p.startswith(NO_METRIC)])
def test_every_results_csv_has_intervals_that_hold_their_points(path):
    table = pd.read_csv(REPO / path)
    # wide tables: <metric>, <metric>_lo, <metric>_hi; long ones (one metric per row): value, lo, hi
    intervals = [(c[: -len("_lo")], c, c[: -len("_lo")] + "_hi") for c in table.columns if c.endswith("_lo")]
    if "lo" in table.columns:
        intervals.append(("value", "lo", "hi"))
    assert intervals, f"{path}: no <metric>_lo/_hi (or value/lo/hi) columns"
    for base, low, high in intervals:
        assert high in table.columns, f"{path}: {low} without {high}"
        lo, hi = pd.to_numeric(table[low], errors="coerce"), pd.to_numeric(table[high], errors="coerce")
        both = lo.notna() & hi.notna()
        assert (lo[both] <= hi[both] + 1e-9).all(), f"{path}: {low} above {high}"
        if base in table.columns:
            point = pd.to_numeric(table[base], errors="coerce")
            # a seed mean may leave a CI of pooled units only in multi-seed rows; one seed's CI holds its point
            single = both & point.notna() & (table["n_seeds"].fillna(1) <= 1 if "n_seeds" in table else True)
            inside = (lo[single] - 1e-9 <= point[single]) & (point[single] <= hi[single] + 1e-9)
            outside = list(np.flatnonzero(~inside.to_numpy()))[:5]
            assert inside.all(), f"{path}: {base} outside [{low}, {high}] in rows {outside}"


def test_committed_claims_are_the_join_of_the_committed_work_files(tmp_path):
    # results/claims.csv is what the claims rule joins from results/claims/<work>.csv: one of them rebuilt
    # without the join (or the join without it) leaves the two disagreeing.
    claims = load_claims(REPO / "config/claims.yaml")
    frames = {w: read_claims(REPO / f"results/claims/{w}.csv") for w in claim_works(claims)}
    merge_claims(frames, claims, scale="demo").to_csv(tmp_path / "claims.csv", index=False)
    assert (tmp_path / "claims.csv").read_bytes() == (REPO / "results/claims.csv").read_bytes()
