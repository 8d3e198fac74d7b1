"""The claims file (``config/claims.yaml``; its header documents the format): reading it and checking it
against the tables the workflow declares. Verdicts are computed in ``multivec.statistics.claims``.

``check_claims`` runs before any job (rules/claims.smk): a claim naming an unknown table, or a row or metric
that its table does not have, stops the run naming the claim and the name. ``load_claims`` refuses a margin,
delta or level without a stated source (``margin_source`` on the rule, on an ``all_of`` above it or on the
claim), and an ``origin`` other than ``paper`` or ``ours``; ``check_claim_origins`` (run by the workflow)
requires every claim to state its origin. Only the standard library and yaml at import: the workflow imports
this module while it parses.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import yaml

from multivec.io import yaml_safe_loader

KINDS = ("greater", "not_worse", "within", "level", "monotone", "saturates", "ordering", "peak", "all_of")
REQUIRED_KEYS = ("id", "work", "claim", "source", "rule")
ORIGINS = ("paper", "ours")  # a claim of the paper, or a target this project set itself
# The bounds of a `level` rule: the statistic's CI against a stated constant (>=, >, <=, <).
LEVEL_BOUNDS = ("at_least", "above", "at_most", "below")
# The keys whose numbers a claim must source (`margin_source`).
THRESHOLD_KEYS = ("margin", "delta", *LEVEL_BOUNDS)


class ClaimError(ValueError):
    """A claim is malformed or names a table, row or metric that does not exist."""


@dataclass(frozen=True)
class Reference:
    table: str
    row: str
    metric: str

    def label(self) -> str:
        return f"{self.row} {self.metric}"


# ---------------------------------------------------------------- reading and checking

def load_claims(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The claims of ``path``, checked for form (unique ids, known kinds, required keys)."""
    try:
        document = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=yaml_safe_loader())
    except yaml.YAMLError as err:
        raise ClaimError(f"{path}: not valid YAML: {err}") from None
    if not isinstance(document, dict) or "claims" not in document:
        raise ClaimError(f"{path}: needs a top-level list `claims:`")
    if document["claims"] is None:  # `claims:` with nothing under it yet
        document["claims"] = []
    if not isinstance(document["claims"], list):
        raise ClaimError(f"{path}: `claims:` must be a list, got {type(document['claims']).__name__}")
    seen = set()
    for number, claim in enumerate(document["claims"], start=1):
        where = f"{path}: claim {number}"
        if not isinstance(claim, dict):
            raise ClaimError(f"{where}: must be a mapping, got {claim!r}")
        missing = [k for k in REQUIRED_KEYS if k not in claim]
        if missing:
            raise ClaimError(f"{where} ({claim.get('id', '?')}): missing {missing}")
        if claim["id"] in seen:
            raise ClaimError(f"{where}: id {claim['id']!r} used twice")
        seen.add(claim["id"])
        if "origin" in claim and claim["origin"] not in ORIGINS:
            raise ClaimError(f"{where} ({claim['id']}): origin must be one of {ORIGINS}, got {claim['origin']!r}")
        references(claim["rule"], f"{where} ({claim['id']})")  # form of the rule and its references
        unsourced = unsourced_thresholds(claim["rule"], _has_source(claim))
        if unsourced:
            raise ClaimError(f"{where} ({claim['id']}): {', '.join(unsourced)} without a stated source: give "
                             "`margin_source:` (the paper's sentence or table it comes from, or \"ours: <why>\") on "
                             "the rule, on an all_of above it, or on the claim")
    return document["claims"]


def _has_source(mapping: Mapping[str, Any]) -> bool:
    value = mapping.get("margin_source")
    return isinstance(value, str) and bool(value.strip())


def unsourced_thresholds(rule: Any, sourced: bool = False, path: str = "rule") -> list[str]:
    """The margins, deltas and levels of ``rule`` (``path.key = value``) with no ``margin_source`` on their
    rule, an ``all_of`` above it, or (``sourced``) the claim."""
    if not isinstance(rule, dict):
        return []
    sourced = sourced or _has_source(rule)
    out = [] if sourced else [f"{path}.{k} = {rule[k]}" for k in THRESHOLD_KEYS if k in rule]
    if rule.get("kind") == "all_of" and isinstance(rule.get("rules"), list):
        for number, sub in enumerate(rule["rules"], start=1):
            out += unsourced_thresholds(sub, sourced, f"{path}.rules[{number}]")
    return out


def check_claim_origins(claims: Sequence[dict[str, Any]], where: str = "claims") -> None:
    """Every claim states its ``origin`` (``paper``: the paper's claim; ``ours``: a target this project set
    itself), so that the tally of claims.md keeps the two apart; ClaimError naming the claims otherwise."""
    missing = [str(c["id"]) for c in claims if c.get("origin") not in ORIGINS]
    if missing:
        raise ClaimError(f"{where}: claim(s) {missing} need `origin: paper` or `origin: ours`")


def parse_reference(item: Any, defaults: Mapping[str, Any], where: str) -> Reference:
    """One ``{table, row, metric}`` reference, its missing keys taken from the rule's ``defaults``."""
    if not isinstance(item, dict):
        raise ClaimError(f"{where}: a reference must be a mapping {{table, row, metric}}, got {item!r}")
    values = {key: item.get(key, defaults.get(key)) for key in ("table", "row", "metric")}
    missing = [k for k, v in values.items() if v in (None, "")]
    if missing:
        raise ClaimError(f"{where}: reference {item!r} lacks {missing} (give them in the reference or the rule)")
    return Reference(str(values["table"]), str(values["row"]), str(values["metric"]))


def references(rule: Any, where: str) -> list[Reference]:
    """Every reference of a rule (checked for form); ClaimError names what is wrong."""
    if not isinstance(rule, dict) or rule.get("kind") not in KINDS:
        raise ClaimError(f"{where}: rule must be a mapping with kind in {KINDS}, got {rule!r}")
    kind = rule["kind"]
    defaults = {k: rule[k] for k in ("table", "row", "metric") if k in rule}
    if kind == "all_of":
        if not isinstance(rule.get("rules"), list) or not rule["rules"]:
            raise ClaimError(f"{where}: all_of needs a non-empty list `rules`")
        out = []
        for sub in rule["rules"]:
            sub = {**defaults, **sub} if isinstance(sub, dict) else sub
            out += references(sub, where)
        return out
    if kind in ("greater", "not_worse", "within"):
        if "a" not in rule or "b" not in rule:
            raise ClaimError(f"{where}: {kind} needs `a` and `b`")
        if kind == "within" and not (_is_number(rule.get("delta")) and rule["delta"] > 0):
            raise ClaimError(f"{where}: within needs a number `delta` > 0")
        if "margin" in rule and not (_is_number(rule["margin"]) and rule["margin"] >= 0):
            raise ClaimError(f"{where}: `margin` must be a number >= 0")
        return [parse_reference(rule["a"], defaults, where), parse_reference(rule["b"], defaults, where)]
    if kind == "level":
        bounds = [k for k in LEVEL_BOUNDS if k in rule]
        if "ref" not in rule or len(bounds) != 1 or not _is_number(rule[bounds[0]]):
            raise ClaimError(f"{where}: level needs `ref` and one number among {LEVEL_BOUNDS}, got {rule!r}")
        return [parse_reference(rule["ref"], defaults, where)]
    items = rule.get("items")
    if not isinstance(items, list) or len(items) < 2:
        raise ClaimError(f"{where}: {kind} needs a list `items` of at least two references")
    if kind == "monotone" and rule.get("direction") not in ("increasing", "decreasing"):
        raise ClaimError(f"{where}: monotone needs direction increasing or decreasing")
    if kind == "saturates" and not (_is_number(rule.get("delta")) and rule["delta"] > 0):
        raise ClaimError(f"{where}: saturates needs a number `delta` > 0")
    return [parse_reference(item, defaults, where) for item in items]


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_claims(claims: Sequence[dict[str, Any]], tables: Mapping[str, Mapping[str, Any]],
                 skip: Mapping[str, str] | None = None, where: str = "claims") -> None:
    """Every reference names a registered table and one of its rows and metrics (ClaimError naming the
    claim and the name otherwise). ``tables``: ``{table: {"rows": [...], "metrics": [...]}}``; claims
    in ``skip`` (and tables not built at this scale) are checked for their table names only."""
    skip = skip or {}
    unknown_skips = sorted(set(skip) - {c["id"] for c in claims})
    if unknown_skips:
        raise ClaimError(f"{where}: skip_claims names unknown claim id(s) {unknown_skips}")
    problems = []
    for claim in claims:
        for ref in references(claim["rule"], f"{where}: {claim['id']}"):
            table = tables.get(ref.table)
            if table is None:
                problems.append(f"{claim['id']}: unknown table {ref.table!r} (tables: {sorted(tables)})")
                continue
            if claim["id"] in skip or not table.get("built", True):
                continue
            if ref.row not in table["rows"]:
                problems.append(f"{claim['id']}: table {ref.table!r} has no row {ref.row!r} (rows: {table['rows']})")
            if ref.metric not in table["metrics"]:
                problems.append(f"{claim['id']}: table {ref.table!r} has no metric {ref.metric!r} "
                                f"(metrics: {table['metrics']})")
    if problems:
        raise ClaimError(f"{where}: " + "; ".join(problems))


def claim_works(claims: Iterable[dict[str, Any]]) -> list[str]:
    """The works the claims belong to (their ``work``), in the order they first appear."""
    return list(dict.fromkeys(str(c["work"]) for c in claims))


def claims_of_work(claims: Sequence[dict[str, Any]], work: str) -> list[dict[str, Any]]:
    """The claims of one work, in file order (ClaimError if it has none)."""
    chosen = [c for c in claims if str(c["work"]) == work]
    if not chosen:
        raise ClaimError(f"no claim has work {work!r} (works: {claim_works(claims)})")
    return chosen


def claim_tables(claims: Iterable[dict[str, Any]]) -> dict[str, set[str]]:
    """``{claim id: tables it reads}``."""
    return {c["id"]: {r.table for r in references(c["rule"], str(c["id"]))} for c in claims}
