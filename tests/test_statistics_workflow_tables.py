"""multivec.statistics.workflow_tables: the table registry, file names, seed sets, settings and the claims'
unit selection that the rule files (rules/statistics_common.smk, rules/claims_common.smk) bind to the config."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from multivec.statistics.claims_file import ClaimError, check_claims
from multivec.statistics.workflow_tables import (SEEDSETS, StatTables, claims_file, claims_params, claims_units,
                                                 model_seeds, skipped_claims, statistics_params, table_comparisons,
                                                 units_path)

STATISTICS = {
    "alpha": 0.05, "confidence": 0.95, "bootstrap_resamples": 200, "permutation_resamples": 300,
    "seeds": {"tables": [13, 14, 15], "claims": [21, 22]},
    "comparisons": {"t_a": [{"a": "x", "b": "y"}]},
    "skip_claims": {"C2": "not at this scale", "C3": None},
    "claims_file": "config/claims.yaml",
}


def _claim(claim_id, work, *tables):
    """A claim of ``work`` comparing row x with row y of metric m, in the first two of ``tables``."""
    return {"id": claim_id, "work": work, "claim": "x beats y", "source": "Table 1",
            "rule": {"kind": "greater", "metric": "m", "a": {"table": tables[0], "row": "x"},
                     "b": {"table": tables[-1], "row": "y"}}}


def _registry():
    tables = StatTables()
    tables.register("t_a", "w1", rows=("x", "y"), metrics=["m"])
    tables.register("t_b", "w1", rows=["x", "y"], metrics=("m",))
    tables.register("t_c", "w1", rows=["x", "y"], metrics=["m"], built=False)
    tables.register("t_d", "w2", rows=["x", "y"], metrics=["m"])
    return tables


CLAIMS = [
    _claim("C1", "w1", "t_a"),
    _claim("C2", "w1", "t_b"),          # skipped: its table is not read
    _claim("C3", "w1", "t_a", "t_c"),   # null skip reason: read, but t_c is not built
    _claim("C4", "w2", "t_d"),
]


def test_register_keeps_the_declaration_in_order():
    tables = _registry()
    assert list(tables) == ["t_a", "t_b", "t_c", "t_d"] and len(tables) == 4 and "t_b" in tables
    assert tables["t_a"] == {"work": "w1", "rows": ["x", "y"], "metrics": ["m"], "built": True}
    assert tables["t_c"]["built"] is False and tables.get("nope") is None
    assert dict(tables)["t_d"]["work"] == "w2"


def test_a_table_registered_twice_is_refused():
    tables = _registry()
    with pytest.raises(ValueError, match="statistics table 't_a' registered twice"):
        tables.register("t_a", "w2", rows=["z"], metrics=["m"])
    assert tables["t_a"]["work"] == "w1"


def test_not_built_names_the_scale():
    assert _registry().not_built("smoke") == {"t_c": "not built at smoke scale"}
    assert StatTables().not_built("paper") == {}


def test_the_registry_is_what_the_claims_are_checked_against():
    tables = _registry()
    check_claims(CLAIMS, tables, skipped_claims(STATISTICS))
    with pytest.raises(ClaimError, match="unknown table 't_e'"):
        check_claims([_claim("C5", "w1", "t_e")], tables)


def test_units_path():
    assert units_path("table2") == "results/units/table2.tables.parquet"
    assert units_path("nugget_fig4", "claims") == "results/units/nugget_fig4.claims.parquet"
    assert units_path("subencoder_{table}", "{seedset}") == "results/units/subencoder_{table}.{seedset}.parquet"


def test_seed_sets():
    assert SEEDSETS == ("tables", "claims")
    assert model_seeds(STATISTICS) == [13, 14, 15] and model_seeds(STATISTICS, "claims") == [21, 22]
    seeds = model_seeds(STATISTICS)
    seeds.append(99)  # a copy: the config is not changed
    assert STATISTICS["seeds"]["tables"] == [13, 14, 15]
    with pytest.raises(KeyError):
        model_seeds(STATISTICS, "other")


def test_settings():
    assert statistics_params(STATISTICS) == {"alpha": 0.05, "confidence": 0.95, "bootstrap_resamples": 200,
                                             "permutation_resamples": 300}
    assert claims_params(STATISTICS, "smoke") == {**statistics_params(STATISTICS), "scale": "smoke",
                                                  "skip": {"C2": "not at this scale"}}
    assert table_comparisons(STATISTICS, "t_a") == [{"a": "x", "b": "y"}]
    assert table_comparisons(STATISTICS, "t_b") == []


def test_skipped_claims_drop_a_null_reason():
    assert skipped_claims(STATISTICS) == {"C2": "not at this scale"}
    assert skipped_claims({**STATISTICS, "skip_claims": None}) == {}
    assert skipped_claims({k: v for k, v in STATISTICS.items() if k != "skip_claims"}) == {}


def test_claims_file_is_relative_to_the_workflow():
    assert claims_file(STATISTICS, "/repo") == os.path.join("/repo", "config/claims.yaml")
    assert claims_file({**STATISTICS, "claims_file": "/elsewhere/claims.yaml"}, "/repo") == "/elsewhere/claims.yaml"


def test_claims_units_leave_out_skipped_claims_and_tables_not_built():
    tables, skip = _registry(), skipped_claims(STATISTICS)
    # C1 and C3 read t_a; C2 (t_b) is skipped; C3's t_c is not built
    assert claims_units(CLAIMS, "w1", tables, skip) == {"t_a": "results/units/t_a.claims.parquet"}
    assert claims_units(CLAIMS, "w1", tables, {}) == {"t_a": "results/units/t_a.claims.parquet",
                                                      "t_b": "results/units/t_b.claims.parquet"}
    assert claims_units(CLAIMS, "w2", tables, skip, "tables") == {"t_d": "results/units/t_d.tables.parquet"}
    assert claims_units(CLAIMS, "w1", tables, {"C1": "x", "C2": "x", "C3": "x"}) == {}
    with pytest.raises(ClaimError, match="no claim has work 'w3'"):
        claims_units(CLAIMS, "w3", tables, skip)


def test_claims_units_are_sorted_by_table():
    tables = _registry()
    claims = [_claim("C1", "w1", "t_d", "t_a"), _claim("C2", "w1", "t_b")]
    assert list(claims_units(claims, "w1", tables, {})) == ["t_a", "t_b", "t_d"]


def test_the_module_loads_no_heavy_library():
    """The rules import it while they parse."""
    code = ("import sys, multivec.statistics.workflow_tables\n"
            "print(sorted(m for m in ('torch', 'pandas', 'scipy', 'numpy') if m in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "[]"
