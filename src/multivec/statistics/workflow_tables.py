"""The statistics layer's part of the workflow, shared by the three works' rules: the registry of results
tables that claims and comparisons may name, the per-unit score files' names, the seed sets, the statistics
settings the table rules take as params, and which unit files each work's claims read.

The rule files bind these to Snakemake's ``config`` (rules/statistics_common.smk, rules/claims_common.smk);
here the configuration's ``statistics`` section is passed in, so each function can be tested alone. Only the
standard library at import: the workflow imports this module while it parses.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from multivec.statistics.claims_file import claim_tables, claims_of_work

# The seed sets: `tables` (what the results tables average) and `claims` (what the claims' verdicts use).
SEEDSETS = ("tables", "claims")
# The settings of statistics.* every table's statistics use.
STATISTICS_KEYS = ("alpha", "confidence", "bootstrap_resamples", "permutation_resamples")


class StatTables(Mapping):
    """The results tables the works declare, ``{table: {"work", "rows", "metrics", "built"}}``, in the order
    they were registered: what the claims are checked against before any job runs
    (``claims_file.check_claims``) and where each claim finds its table's unit files."""

    def __init__(self) -> None:
        self._tables: dict[str, dict[str, Any]] = {}

    def register(self, table: str, work: str, rows: Iterable[str], metrics: Iterable[str],
                 built: bool = True) -> None:
        """Declare a results table whose rule writes ``units_path(table, seedset)`` for both seed sets.

        rows / metrics: the names its unit files use (what claims and comparisons may name); built: False
        when this scale's configuration does not build the table (its claims are reported as not built).
        ValueError if the table is registered twice."""
        if table in self._tables:
            raise ValueError(f"statistics table {table!r} registered twice")
        self._tables[table] = {"work": work, "rows": list(rows), "metrics": list(metrics), "built": bool(built)}

    def __getitem__(self, table: str) -> dict[str, Any]:
        return self._tables[table]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tables)

    def __len__(self) -> int:
        return len(self._tables)

    def __repr__(self) -> str:
        return f"StatTables({self._tables!r})"

    def not_built(self, scale: str) -> dict[str, str]:
        """``{table: why}`` for the registered tables this scale does not build."""
        return {t: f"not built at {scale} scale" for t, v in self._tables.items() if not v["built"]}


def units_path(table: str, seedset: str = "tables") -> str:
    """Per-unit scores of a table's rows over a seed set (multivec.statistics.units, Parquet)."""
    return f"results/units/{table}.{seedset}.parquet"


def model_seeds(statistics: Mapping[str, Any], seedset: str = "tables") -> list:
    """Training seeds of a seed set of the ``statistics`` config: `tables` (what results tables average) or
    `claims`."""
    return list(statistics["seeds"][seedset])


def table_comparisons(statistics: Mapping[str, Any], table: str) -> list:
    """The row-vs-row comparisons declared for a table in statistics.comparisons (may be empty)."""
    return statistics["comparisons"].get(table, [])


def statistics_params(statistics: Mapping[str, Any]) -> dict[str, Any]:
    """Settings every table's statistics use (params of the table rules and the claims rule)."""
    return {key: statistics[key] for key in STATISTICS_KEYS}


def skipped_claims(statistics: Mapping[str, Any]) -> dict[str, Any]:
    """{claim id: why} of statistics.skip_claims; a null reason (a later config file lifting a base file's
    skip) is not a skip."""
    return {k: v for k, v in (statistics.get("skip_claims") or {}).items() if v is not None}


def claims_params(statistics: Mapping[str, Any], scale: str) -> dict[str, Any]:
    """Params of a rule that computes verdicts (the claims rule, each table's Markdown)."""
    return {**statistics_params(statistics), "scale": scale, "skip": skipped_claims(statistics)}


def claims_file(statistics: Mapping[str, Any], basedir: str) -> str:
    """The claims file (statistics.claims_file): as given if absolute, else relative to ``basedir`` (the
    workflow's directory)."""
    path = statistics["claims_file"]
    return path if os.path.isabs(path) else os.path.join(basedir, path)


def claims_units(claims: Sequence[dict[str, Any]], work: str, registry: Mapping[str, Mapping[str, Any]],
                 skipped: Mapping[str, Any], seedset: str = "claims") -> dict[str, str]:
    """{table: unit file over ``seedset``}, sorted by table, of every table that a claim of ``work`` not in
    ``skipped`` reads and this scale builds (``registry[table]["built"]``)."""
    tables = set()
    for claim_id, tables_read in claim_tables(claims_of_work(claims, work)).items():
        if claim_id not in skipped:
            tables |= {t for t in tables_read if registry[t]["built"]}
    return {table: units_path(table, seedset) for table in sorted(tables)}
