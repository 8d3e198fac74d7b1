"""Shared by every work's rules: the seed sets a table's rows are trained and scored at, and which rows the
`claims` seed set holds (formerly model_seeds in rules/statistics_common.smk, claimed_rows and seedset_rows in
rules/common.smk).

A table's unit file over the `tables` seeds holds every row; over the `claims` seeds only the rows that some
claim of ``statistics.claims_file`` names (only they are trained at the claim seeds). The rule files build one
``SeedSets`` from the config's ``statistics`` section and the claims file's path (rules/statistics_common.smk).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from multivec.statistics import workflow_tables


@dataclass(frozen=True)
class SeedSets:
    """The ``statistics`` config section and the claims file (resolved against the workflow's directory)."""

    statistics: Mapping[str, Any]
    claims_path: str

    def model_seeds(self, seedset: str = "tables") -> list:
        """Training seeds of a seed set: `tables` (what results tables average) or `claims`."""
        return workflow_tables.model_seeds(self.statistics, seedset)

    def claimed_rows(self, table: str) -> set:
        """Rows of ``table`` that some claim of the claims file names (read anew at each call)."""
        from multivec.statistics.claims_file import load_claims, references

        return {ref.row for claim in load_claims(self.claims_path)
                for ref in references(claim["rule"], str(claim["id"])) if ref.table == table}

    def rows(self, table: str, seedset: str, rows: Iterable[str]) -> list:
        """The rows of a table's unit file over a seed set: every row for `tables`; for `claims`, the rows a
        claim names, in table order."""
        if seedset == "tables":
            return list(rows)
        named = self.claimed_rows(table)
        return [row for row in rows if row in named]
