"""Paper claims as data, with verdicts computed from per-unit scores.

The claims live in one file (``config/claims.yaml``; its header documents the format). Each claim
has a ``rule`` of one of the kinds in ``KINDS``; the rule's references name ``{table, row, metric}``
in the tables' unit files (``multivec.statistics.units``). A rule is broken into sub-tests, each a
paired comparison over the same evaluation units (``resampling.paired_difference``: the difference
of the seed means, its paired bootstrap CI and the randomization p-value) or one statistic against a
stated level (``level``: its bootstrap CI). The verdict table (below, docs/statistics.md) says when
each sub-test holds, is contradicted or is inconclusive, and the claim's verdict is one of

- ``holds``: every sub-test the claim needs holds at ``alpha`` (intersection-union: no adjustment);
- ``contradicted``: some sub-test is contradicted, judged with Holm-adjusted p-values and Bonferroni CIs
  over the claim's sub-tests (any one of m could contradict it);
- ``inconclusive``: neither (including "too noisy to tell");
- ``not built``: an input of the claim is not built at this scale (the note says which and why).

``assess_claims`` gives the claims (``CLAIM_COLUMNS``, with the comparison that decided each verdict) and
every sub-test (``SUB_TEST_COLUMNS``: results/claims_comparisons.csv). Reading and checking the file
(``load_claims``, ``check_claims``, ``references``) is ``multivec.statistics.claims_file``, which the
workflow imports while it parses.

Each work's claims are evaluated on their own (``results/claims/<work>.csv`` and
``<work>_comparisons.csv``: a work's claims only need that work's models) and ``merge_claims`` /
``merge_comparisons`` join them. Every test is seeded alone and the multiplicity corrections run within
a claim, so a claim's rows are the same whichever claims it is evaluated with.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from multivec.io.markdown_table import markdown_table
from multivec.statistics.resampling import (
    DEFAULT_PERMUTATIONS,
    DEFAULT_RESAMPLES,
    PairedDifference,
    bootstrap_ci,
    holm,
    paired_difference,
    point_estimate,
)
from multivec.statistics.claims_file import (LEVEL_BOUNDS, ClaimError, Reference, load_claims, parse_reference,
                                             references)
from multivec.statistics.tables import format_p
from multivec.statistics.clusters import table_cluster_kind
from multivec.statistics.units import SeedStack, read_units, stack_seeds

VERDICTS = ("holds", "contradicted", "inconclusive", "not built")
ORIGIN_NAMES = {"paper": "papers' claims", "ours": "our targets"}
# difference, difference_lo, difference_hi: the deciding sub-test's (``decided_by``), with the CI at ``ci_level``
# (the configured level for holds and inconclusive, the claim's Bonferroni level for contradicted; a level's
# difference is the statistic minus the level); p: its raw randomization p, p_holm: Holm-adjusted in the claim.
CLAIM_COLUMNS = ["id", "work", "origin", "claim", "source", "rule", "scale", "n_seeds", "paper", "ours", "decided_by",
                 "difference", "difference_lo", "difference_hi", "ci_level", "p", "p_holm", "tests", "verdict",
                 "note"]


# ---------------------------------------------------------------- the verdict table

# A claim's rule is broken into sub-tests, each a criterion over one paired difference A − B (seed means, paired
# bootstrap CI, randomization p) or one statistic against a stated level. ``required``: "holds" (the claim holds
# only if it holds) or "not contradicted" (a monotone's steps: a non-significant step is allowed, a step
# significantly against the direction contradicts the claim). ``threshold``: the margin, delta or level.
#
# The verdict table (docs/statistics.md § Claims, the header of config/claims.yaml), per sub-test; ``[lo, hi]`` is
# the CI at the configured level (holds) or at the claim's Bonferroni level (contradicted), ``p`` the raw (holds)
# or Holm-adjusted (contradicted) randomization p-value:
#
#   greater  (margin m >= 0)   claimed: A − B > m
#       holds         p < alpha, A − B > m and lo > m
#       contradicted  hi < m (the whole CI at or below the margin); with m = 0 also p < alpha (A < B significantly)
#   not_worse (margin m >= 0)  claimed: A − B >= −m (non-inferiority)
#       holds         lo >= −m
#       contradicted  hi < −m (the whole CI below −m)
#   within   (delta d > 0)     claimed: |A − B| <= d (equivalence)
#       holds         −d <= lo and hi <= d
#       contradicted  hi < −d or lo > d (the whole CI outside [−d, d])
#   level    (at_least / above / at_most / below v)   claimed: statistic >= v / > v / <= v / < v
#       holds         lo >= v / lo > v / hi <= v / hi < v
#       contradicted  hi < v / hi <= v / lo > v / lo >= v
#   anything else: inconclusive.
#
# Multiplicity within a claim. The claim holds only if every required sub-test holds: the intersection-union
# principle (Berger 1982) makes that a level-alpha test with no adjustment, so "holds" reads the raw p and the
# CI at the configured level. The claim is contradicted if any one sub-test is: m chances, so "contradicted"
# reads Holm-adjusted p-values and Bonferroni CIs at 1 − (1 − confidence) / m, m the claim's sub-tests.

# One row per sub-test (results/claims_comparisons.csv): difference_lo/_hi at ``confidence``, adjusted_lo/_hi at the
# claim's Bonferroni ``confidence_adjusted`` (named ``<x>_lo``/``<x>_hi`` like every results CSV's intervals).
SUB_TEST_COLUMNS = ["claim", "sub_test", "kind", "rule", "role", "a", "b", "metric", "threshold", "required",
                    "n_seeds", "difference", "difference_lo", "difference_hi", "confidence", "adjusted_lo",
                    "adjusted_hi", "confidence_adjusted", "seed_sd", "p", "p_adjusted", "passes", "decided"]


@dataclass(frozen=True)
class _SubTest:
    number: str                 # "2.1": rule 2 of the claim's all_of, its first comparison
    kind: str                   # greater | not_worse | within | level
    rule: str                   # the kind of the rule the sub-test belongs to (monotone, peak, ...)
    role: str                   # "", "step", "first -> last", "last step", "pair"
    a: Reference
    b: Reference | None         # None for a level
    threshold: float            # margin, delta or level
    bound: str = ""             # a level's at_least | above | at_most | below
    required: str = "holds"


@dataclass(frozen=True)
class _Interval:
    difference: float
    lo: float
    hi: float
    seed_sd: float


def _sub_tests(rule: dict[str, Any], defaults: Mapping[str, Any], number: str) -> list[_SubTest]:
    """The sub-tests of a rule, numbered ``<rule number>.<k>``, in a fixed order."""
    kind = rule["kind"]
    defaults = {**defaults, **{k: rule[k] for k in ("table", "row", "metric") if k in rule}}
    if kind == "all_of":
        return [t for k, sub in enumerate(rule["rules"], start=1)
                for t in _sub_tests(sub, defaults, f"{number}.{k}" if number else str(k))]
    number = number or "1"

    def ref(item):
        return parse_reference(item, defaults, "")

    def tests(specs):
        return [_SubTest(f"{number}.{k}", *spec) for k, spec in enumerate(specs, start=1)]

    if kind in ("greater", "not_worse"):
        return tests([(kind, kind, "", ref(rule["a"]), ref(rule["b"]), float(rule.get("margin", 0)))])
    if kind == "within":
        return tests([("within", "within", "", ref(rule["a"]), ref(rule["b"]), float(rule["delta"]))])
    if kind == "level":
        bound = next(k for k in LEVEL_BOUNDS if k in rule)
        return tests([("level", "level", "", ref(rule["ref"]), None, float(rule[bound]), bound)])
    items = [ref(i) for i in rule["items"]]
    if kind == "peak":
        return tests([("greater", "peak", "pair", items[0], other, 0.0) for other in items[1:]])
    if kind == "ordering":
        return tests([("greater", "ordering", "pair", a, b, 0.0) for a, b in zip(items[:-1], items[1:])])
    # monotone / saturates, tested as increasing: a decreasing list is reversed (the same pairs, signs flipped)
    if kind == "monotone" and rule["direction"] == "decreasing":
        items = items[::-1]
    specs = [("greater", kind, "step", later, earlier, 0.0, "", "not contradicted")
             for earlier, later in zip(items[:-1], items[1:])]
    if len(items) > 2:
        specs.append(("greater", kind, "first -> last", items[-1], items[0], 0.0))
    else:
        specs[0] = specs[0][:-1] + ("holds",)  # two items: the only step is the rise
    if kind == "saturates":
        specs.append(("within", kind, "last step", items[-1], items[-2], float(rule["delta"])))
    return tests(specs)


def _passes(test: _SubTest, raw: _Interval, adjusted: _Interval, p_raw: float, p_adjusted: float,
            alpha: float) -> str:
    """The sub-test's verdict by the table above."""
    t = test.threshold
    if test.kind == "greater":
        if p_raw < alpha and raw.difference > t and raw.lo > t:
            return "holds"
        if adjusted.hi < t and (t > 0 or (p_adjusted < alpha and adjusted.difference < 0)):
            return "contradicted"
    elif test.kind == "not_worse":
        if raw.lo >= -t:
            return "holds"
        if adjusted.hi < -t:
            return "contradicted"
    elif test.kind == "within":
        if -t <= raw.lo and raw.hi <= t:
            return "holds"
        if adjusted.hi < -t or adjusted.lo > t:
            return "contradicted"
    else:  # level: the intervals are of the statistic itself
        holds = {"at_least": raw.lo >= t, "above": raw.lo > t, "at_most": raw.hi <= t, "below": raw.hi < t}
        against = {"at_least": adjusted.hi < t, "above": adjusted.hi <= t, "at_most": adjusted.lo > t,
                   "below": adjusted.lo >= t}
        if holds[test.bound]:
            return "holds"
        if against[test.bound]:
            return "contradicted"
    return "inconclusive"


def _clearance(test: _SubTest, raw: _Interval) -> float:
    """How far the CI clears the sub-test's bar, in CI widths (smallest = the weakest passing sub-test)."""
    t = test.threshold
    if test.kind == "greater":
        gap = raw.lo - t
    elif test.kind == "not_worse":
        gap = raw.lo + t
    elif test.kind == "within":
        gap = min(raw.lo + t, t - raw.hi)
    else:
        gap = raw.lo - t if test.bound in ("at_least", "above") else t - raw.hi
    width = raw.hi - raw.lo
    return gap / width if width > 0 else math.copysign(math.inf, gap) if gap else 0.0


@dataclass
class _Context:
    stacks: dict[Reference, SeedStack]
    confidence: float
    n_resamples: int
    n_permutations: int
    seed: int
    pairs: dict[tuple[Reference, Reference, float], PairedDifference] = field(default_factory=dict)
    levels: dict[tuple[Reference, float], _Interval] = field(default_factory=dict)

    def pair(self, a: Reference, b: Reference, confidence: float) -> PairedDifference:
        key = (a, b, confidence)
        if key not in self.pairs:
            self.pairs[key] = paired_difference(self.stacks[a], self.stacks[b], confidence=confidence,
                                                n_resamples=self.n_resamples, n_permutations=self.n_permutations,
                                                seed=self.seed)
        return self.pairs[key]

    def level(self, a: Reference, confidence: float) -> _Interval:
        key = (a, confidence)
        if key not in self.levels:
            mean, sd = point_estimate(self.stacks[a])
            lo, hi = bootstrap_ci(self.stacks[a], confidence, self.n_resamples, self.seed)
            self.levels[key] = _Interval(mean, lo, hi, sd)
        return self.levels[key]

    def interval(self, test: _SubTest, confidence: float) -> _Interval:
        if test.b is None:
            return self.level(test.a, confidence)
        d = self.pair(test.a, test.b, confidence)
        return _Interval(d.difference, d.lo, d.hi, float(getattr(d, "seed_sd", float("nan"))))


@dataclass
class _Judged:
    test: _SubTest
    raw: _Interval
    adjusted: _Interval
    confidence_adjusted: float
    p: float
    p_adjusted: float
    passes: str
    decided: bool = False


def _judge(tests: Sequence[_SubTest], ctx: _Context, alpha: float) -> list[_Judged]:
    """Every sub-test of one claim judged, with the claim's Holm p-values and Bonferroni CIs."""
    pairs = list(dict.fromkeys((t.a, t.b) for t in tests if t.b is not None))
    p_raw = {pair: ctx.pair(*pair, ctx.confidence).p for pair in pairs}
    p_holm = dict(zip(pairs, holm([p_raw[pair] for pair in pairs]))) if pairs else {}
    confidence_adjusted = 1 - (1 - ctx.confidence) / len(tests)
    judged = []
    for test in tests:
        raw = ctx.interval(test, ctx.confidence)
        adjusted = raw if len(tests) == 1 else ctx.interval(test, confidence_adjusted)
        p = p_raw.get((test.a, test.b), math.nan)
        p_adjusted = float(p_holm.get((test.a, test.b), math.nan))
        judged.append(_Judged(test, raw, adjusted, confidence_adjusted, p, p_adjusted,
                              _passes(test, raw, adjusted, p, p_adjusted, alpha)))
    return judged


def _verdict(judged: Sequence[_Judged]) -> tuple[str, _Judged]:
    """The claim's verdict and the sub-test that decided it: the first contradicted one; for holds, the
    weakest of the sub-tests that had to hold; for inconclusive, the first that had to hold and did not."""
    contradicted = [j for j in judged if j.passes == "contradicted"]
    if contradicted:
        return "contradicted", contradicted[0]
    required = [j for j in judged if j.test.required == "holds"]
    short = [j for j in required if j.passes != "holds"]
    if short:
        return "inconclusive", short[0]
    return "holds", min(required, key=lambda j: _clearance(j.test, j.raw))


def _threshold_text(test: _SubTest) -> str:
    if test.kind == "level":
        return f"{test.bound} {test.threshold:g}"
    name = "delta" if test.kind == "within" else "margin"
    return f"{name} {test.threshold:g}" if test.threshold or test.kind == "not_worse" else ""


def _comparison_text(j: _Judged) -> str:
    t = j.test
    what = (f"{t.a.row} {t.a.metric} − {t.threshold:g}" if t.b is None else
            f"{t.a.row} − {t.b.row} {t.a.metric}" if t.a.metric == t.b.metric else
            f"{t.a.row} {t.a.metric} − {t.b.row} {t.b.metric}" if t.a.row != t.b.row else
            f"{t.a.row} {t.a.metric} − {t.b.metric}")
    extras = ", ".join(x for x in (t.rule if t.rule != t.kind else "", t.role, _threshold_text(t)) if x)
    return f"{t.number} {t.kind}" + (f" ({extras})" if extras else "") + f": {what}"


def _reference_text(ref: Reference | None) -> str:
    return "" if ref is None else f"{ref.table}/{ref.row}/{ref.metric}"


def _n_seeds(stacks: Sequence[SeedStack]) -> int:
    """The seeds of the trained rows compared (untrained rows are deterministic: one)."""
    trained = [s.n_seeds for s in stacks if s.seeds != [None]]
    return min(trained) if trained else 1


def _sub_test_records(claim_id: str, judged: Sequence[_Judged], ctx: _Context) -> list[dict[str, Any]]:
    return [{"claim": claim_id, "sub_test": j.test.number, "kind": j.test.kind, "rule": j.test.rule,
             "role": j.test.role, "a": _reference_text(j.test.a),
             "b": _reference_text(j.test.b) if j.test.b is not None else f"level: {j.test.bound} {j.test.threshold:g}",
             "metric": j.test.a.metric, "threshold": j.test.threshold, "required": j.test.required,
             "n_seeds": _n_seeds([ctx.stacks[r] for r in (j.test.a, j.test.b) if r is not None]),
             "difference": j.raw.difference, "difference_lo": j.raw.lo, "difference_hi": j.raw.hi,
             "confidence": ctx.confidence, "adjusted_lo": j.adjusted.lo, "adjusted_hi": j.adjusted.hi,
             "confidence_adjusted": j.confidence_adjusted, "seed_sd": j.raw.seed_sd, "p": j.p,
             "p_adjusted": j.p_adjusted, "passes": j.passes, "decided": j.decided} for j in judged]


def _notes(judged: Sequence[_Judged], alpha: float) -> list[str]:
    """What a reader needs beside the verdict: a margin the sample cannot resolve; a difference significant
    in the claimed direction but smaller than the margin."""
    notes, unresolvable = [], []
    for j in judged:
        t, half = j.test, (j.raw.hi - j.raw.lo) / 2
        if t.kind in ("not_worse", "within") and half > t.threshold:
            unresolvable.append((t.number, half, "margin" if t.kind == "not_worse" else "delta", t.threshold))
        if t.kind == "greater" and t.threshold > 0 and j.passes == "contradicted" and j.p < alpha and j.raw.lo > 0:
            notes.append(f"{t.number}: A > B significantly, but by less than the margin {t.threshold:g}")
    if unresolvable:
        number, half, name, threshold = unresolvable[0]
        notes.insert(0, f"sub-test(s) {', '.join(u[0] for u in unresolvable)} cannot hold at this sample size: the CI "
                        f"half-width exceeds the {name} (e.g. {number}: {half:.2f} > {name} {threshold:g})")
    return notes


# ---------------------------------------------------------------- evaluation

@dataclass
class ClaimResults:
    """``claims``: one row per claim (``CLAIM_COLUMNS``); ``comparisons``: one row per sub-test of every
    evaluated claim (``SUB_TEST_COLUMNS``), ``decided`` marking the one that decided the claim's verdict."""

    claims: pd.DataFrame
    comparisons: pd.DataFrame


def _rule_text(rule: dict[str, Any]) -> str:
    kind = rule["kind"]
    extras = ", ".join(f"{k}={rule[k]}" for k in ("direction", "margin", "delta", *LEVEL_BOUNDS) if k in rule)
    if kind == "all_of":
        return "all of (" + "; ".join(_rule_text(sub) for sub in rule["rules"]) + ")"
    return kind + (f" ({extras})" if extras else "")


def _estimate_text(stack: SeedStack, confidence: float, n_resamples: int, seed: int) -> str:
    mean, sd = point_estimate(stack)
    lo, hi = bootstrap_ci(stack, confidence, n_resamples, seed)
    text = f"{stack.row} {stack.metric} {mean:.2f} [{lo:.2f}, {hi:.2f}]"
    return text + (f" ±{sd:.2f}" if not math.isnan(sd) else "")


def assess_claims(claims: Sequence[dict[str, Any]], units: Mapping[str, str | os.PathLike], *, scale: str,
                  skip: Mapping[str, str] | None = None, not_built: Mapping[str, str] | None = None,
                  alpha: float = 0.05, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                  n_permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0) -> ClaimResults:
    """The claims' verdicts and every sub-test behind them. ``units``: ``{table: unit file}`` of the tables
    built; ``not_built``: ``{table: why}`` for tables this scale does not build; ``skip``: ``{claim id: why}``."""
    skip, not_built = dict(skip or {}), dict(not_built or {})
    stacks: dict[Reference, SeedStack] = {}
    for table, path in units.items():
        for (row, metric), stack in stack_seeds(read_units(path), clusters=table_cluster_kind(table)).items():
            stacks[Reference(table, row, metric)] = stack
    ctx = _Context(stacks, confidence, n_resamples, n_permutations, seed)
    records, sub_records = [], []
    for claim in claims:
        refs = references(claim["rule"], str(claim["id"]))
        record = {"id": claim["id"], "work": claim["work"], "origin": claim.get("origin", ""),
                  "claim": claim["claim"], "source": claim["source"], "rule": _rule_text(claim["rule"]),
                  "scale": scale, "paper": _paper_text(claim.get("paper")), "n_seeds": None, "ours": "",
                  "decided_by": "", "difference": None, "difference_lo": None, "difference_hi": None,
                  "ci_level": None, "p": None, "p_holm": None, "tests": 0, "verdict": "not built", "note": ""}
        missing_tables = sorted({r.table for r in refs if r.table not in units})
        if claim["id"] in skip:
            record["note"] = f"not built at {scale} scale: {skip[claim['id']]}"
        elif missing_tables:
            reasons = [f"{t} ({not_built[t]})" if t in not_built else t for t in missing_tables]
            record["note"] = f"not built at {scale} scale: " + ", ".join(reasons)
        else:
            absent = [r for r in refs if r not in stacks]
            if absent:
                raise ClaimError(f"{claim['id']}: no unit scores for " + ", ".join(
                    f"{r.table}/{r.row}/{r.metric}" for r in absent))
            judged = _judge(_sub_tests(claim["rule"], {}, ""), ctx, alpha)
            verdict, decided = _verdict(judged)
            decided.decided = True
            interval = decided.adjusted if verdict == "contradicted" else decided.raw
            level = decided.confidence_adjusted if verdict == "contradicted" else confidence
            if decided.test.b is None:  # a level: the statistic against the level
                interval = _Interval(interval.difference - decided.test.threshold, interval.lo - decided.test.threshold,
                                     interval.hi - decided.test.threshold, interval.seed_sd)
            trained = [r for r in dict.fromkeys(refs) if stacks[r].seeds != [None]]
            # Untrained rows are deterministic: the seed count is that of the trained rows compared.
            n_seeds = _n_seeds([stacks[r] for r in dict.fromkeys(refs)])
            notes = _notes(judged, alpha) + (["verdict from one training seed"] if trained and n_seeds == 1 else [])
            record.update(verdict=verdict, tests=len(judged), n_seeds=n_seeds,
                          ours="; ".join(_estimate_text(stacks[r], confidence, n_resamples, seed)
                                         for r in dict.fromkeys(refs)),
                          decided_by=_comparison_text(decided), difference=interval.difference,
                          difference_lo=interval.lo, difference_hi=interval.hi, ci_level=level,
                          p=decided.p, p_holm=decided.p_adjusted, note="; ".join(notes))
            sub_records += _sub_test_records(str(claim["id"]), judged, ctx)
        records.append(record)
    comparisons = pd.DataFrame.from_records(sub_records, columns=SUB_TEST_COLUMNS)
    return ClaimResults(pd.DataFrame.from_records(records, columns=CLAIM_COLUMNS), comparisons)


def evaluate_claims(claims: Sequence[dict[str, Any]], units: Mapping[str, str | os.PathLike], *, scale: str,
                    skip: Mapping[str, str] | None = None, not_built: Mapping[str, str] | None = None,
                    alpha: float = 0.05, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                    n_permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0) -> pd.DataFrame:
    """One row per claim (``CLAIM_COLUMNS``): ``assess_claims(...).claims``."""
    return assess_claims(claims, units, scale=scale, skip=skip, not_built=not_built, alpha=alpha,
                         confidence=confidence, n_resamples=n_resamples, n_permutations=n_permutations,
                         seed=seed).claims


def _paper_text(paper: Any) -> str:
    if paper is None:
        return ""
    if isinstance(paper, dict):
        return "; ".join(f"{k}: {v}" for k, v in paper.items())
    return str(paper)


# ---------------------------------------------------------------- writing

def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


def _difference_text(record: Mapping[str, Any]) -> str:
    """The deciding comparison: which sub-test, its difference with the CI that decided, and its p-values."""
    if _missing(record.get("difference")):
        return record.get("decided_by") or ""
    ci = f"{record['difference']:+.2f} [{record['difference_lo']:+.2f}, {record['difference_hi']:+.2f}]"
    if "decided_by" not in record:  # a frame of the columns before the sub-tests were written
        return f"{ci}, p = {format_p(record['p_holm'])}"
    level = "" if _missing(record.get("ci_level")) else f" ({100 * record['ci_level']:.4g}% CI)"
    p = "" if _missing(record.get("p")) else f", p = {format_p(record['p'])} (Holm {format_p(record['p_holm'])})"
    return f"{record['decided_by']}: {ci}{level}{p}"


def claims_markdown(frame: pd.DataFrame, title: str = "Claims", heading: str = "#") -> list[str]:
    """Markdown lines: one table row per claim with its verdict and the comparison that decided it."""
    lines = [f"{heading} {title}", "",
             "Verdicts computed from the per-unit scores by `multivec.statistics.claims` with the rules of "
             "`config/claims.yaml` and the verdict table of docs/statistics.md. The comparison shown is the sub-test "
             "that decided the verdict (for contradicted: a contradicted one, with its Bonferroni CI over the "
             "claim's sub-tests; for holds: the weakest of those that had to hold; for inconclusive: the first that "
             "had to hold and did not), as `<rule>.<comparison>`: first − second, seed means, paired bootstrap CI; "
             "p: paired randomization test, raw (Holm within the claim). `results/claims_comparisons.csv` has every "
             "sub-test over the claim seeds.", ""]
    rows = []
    for r in frame.to_dict("records"):
        seeds = "" if _missing(r["n_seeds"]) else str(int(r["n_seeds"]))
        rows.append([f"{r['id']}", f"{r['claim']}", f"{r['source']}", f"{r['paper']}", f"{r['ours']}",
                     _difference_text(r), seeds, f"**{r['verdict']}**", f"{r['note']}"])
    return lines + markdown_table(["id", "claim", "source", "paper", "ours", "difference, p", "seeds", "verdict",
                                   "note"], rows)


def tally(frame: pd.DataFrame) -> list[str]:
    """One line per origin: "papers' claims: 2 holds, 1 contradicted, ...; our targets: ..."."""
    origins = frame["origin"].fillna("").astype(str) if "origin" in frame else pd.Series([""] * len(frame))
    parts = []
    for origin in [*ORIGIN_NAMES, *sorted(set(origins) - set(ORIGIN_NAMES))]:
        chosen = frame[(origins == origin).to_numpy()]
        if len(chosen):
            counts = chosen["verdict"].value_counts().to_dict()
            name = ORIGIN_NAMES.get(origin, f"origin {origin!r}" if origin else "origin not stated")
            parts.append(f"{name} ({len(chosen)}): " + ", ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS))
    return parts


TEXT_COLUMNS = ("id", "work", "origin", "claim", "source", "rule", "scale", "paper", "ours", "decided_by", "verdict",
                "note")


def read_claims(path: str | os.PathLike) -> pd.DataFrame:
    """A claims CSV (``CLAIM_COLUMNS``, as ``evaluate_claims`` wrote it), its numbers read back exactly."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    if list(frame.columns) != CLAIM_COLUMNS:
        raise ClaimError(f"{path}: columns {list(frame.columns)}, expected {CLAIM_COLUMNS}")
    # Python's float() reads back exactly what to_csv wrote (pandas' own C parser may not, before 3.0).
    for column in set(CLAIM_COLUMNS) - set(TEXT_COLUMNS) - {"tests"}:
        frame[column] = [float(v) if v else math.nan for v in frame[column]]
    frame["tests"] = frame["tests"].astype(int)
    return frame


SUB_TEST_TEXT = ("claim", "sub_test", "kind", "rule", "role", "a", "b", "metric", "required", "passes")


def read_comparisons(path: str | os.PathLike) -> pd.DataFrame:
    """A comparisons CSV (``SUB_TEST_COLUMNS``, as ``assess_claims`` gave it), its numbers read back exactly."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    if list(frame.columns) != SUB_TEST_COLUMNS:
        raise ClaimError(f"{path}: columns {list(frame.columns)}, expected {SUB_TEST_COLUMNS}")
    for column in set(SUB_TEST_COLUMNS) - set(SUB_TEST_TEXT) - {"decided", "n_seeds"}:
        frame[column] = [float(v) if v else math.nan for v in frame[column]]
    frame["n_seeds"] = frame["n_seeds"].astype(int)
    frame["decided"] = frame["decided"].map({"True": True, "False": False})
    return frame


def merge_comparisons(frames: Mapping[str, pd.DataFrame], claims: Mapping[str, pd.DataFrame] | pd.DataFrame, *,
                      where: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Every work's sub-tests, in the order of the merged ``claims`` frame (``merge_claims``); each evaluated
    claim (not "not built") must have its sub-tests, one of them deciding, and no other claim any (ClaimError
    naming the file, ``where[work]``, to rebuild otherwise)."""
    where = dict(where or {})
    claims = claims if isinstance(claims, pd.DataFrame) else pd.concat(list(claims.values()), ignore_index=True)
    evaluated = [str(i) for i, v in zip(claims["id"], claims["verdict"]) if v != "not built"]
    work_of = {str(i): str(w) for i, w in zip(claims["id"], claims["work"])}
    problems = [f"no comparisons given for work {w!r}" for w in dict.fromkeys(work_of.values()) if w not in frames]
    for work, frame in frames.items():
        ids = [str(i) for i in dict.fromkeys(frame["claim"])]
        expected = [i for i in evaluated if work_of[i] == work]
        if ids != expected:
            problems.append(f"{where.get(work, work)}: sub-tests of claims {ids}, but the evaluated claims of work "
                            f"{work!r} are {expected}")
        decided = frame.groupby("claim", sort=False)["decided"].sum() if len(frame) else pd.Series(dtype=int)
        if (decided != 1).any():
            problems.append(f"{where.get(work, work)}: claims {list(decided.index[decided != 1])} have not exactly "
                            "one deciding sub-test")
    if problems:
        raise ClaimError("cannot merge the claims' comparisons (rebuild the files named): " + "; ".join(problems))
    merged = pd.concat([frames[w] for w in frames], ignore_index=True) if frames else \
        pd.DataFrame(columns=SUB_TEST_COLUMNS)
    order = {i: k for k, i in enumerate(evaluated)}
    return merged.sort_values("claim", key=lambda ids: ids.astype(str).map(order), kind="stable").reset_index(
        drop=True)


def merge_claims(frames: Mapping[str, pd.DataFrame], claims: Sequence[dict[str, Any]], *, scale: str,
                 where: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One frame of every claim, in the claims file's order, from ``{work: that work's claims}``.

    A work's frame must hold exactly its claims of ``claims`` at ``scale``; anything else means it was
    built from another claims file or scale, and ClaimError names the file (``where[work]``) to rebuild."""
    where = dict(where or {})
    expected: dict[str, list[str]] = {}
    for claim in claims:
        expected.setdefault(str(claim["work"]), []).append(str(claim["id"]))
    problems = [f"no claims given for work {w!r}" for w in expected if w not in frames]
    problems += [f"{where.get(w, w)}: work {w!r} has no claim in the claims file" for w in frames if w not in expected]
    for work, frame in frames.items():
        name = where.get(work, work)
        ids = [str(i) for i in frame["id"]]
        if work in expected and ids != expected[work]:
            problems.append(f"{name}: claims {ids}, but the claims file gives work {work!r} {expected[work]}")
        if set(frame["work"].astype(str)) - {work}:
            problems.append(f"{name}: rows of other works {sorted(set(frame['work'].astype(str)) - {work})}")
        if set(frame["scale"].astype(str)) - {scale}:
            problems.append(f"{name}: built at scale {sorted(set(frame['scale'].astype(str)))}, not {scale!r}")
    if problems:
        raise ClaimError("cannot merge the claims (rebuild the files named): " + "; ".join(problems))
    merged = pd.concat([frames[w] for w in expected], ignore_index=True)
    order = {str(c["id"]): i for i, c in enumerate(claims)}
    return merged.sort_values("id", key=lambda ids: ids.map(order), kind="stable").reset_index(drop=True)


def write_claims(frame: pd.DataFrame, csv_path: str | os.PathLike, md_path: str | os.PathLike,
                 scale_line: str = "", changed_settings: Sequence[str] = ()) -> None:
    """The claims as CSV and Markdown; ``changed_settings`` (a paper-scale run's settings that differ from
    docs/paper_settings.md, multivec.rules.paper_settings) end the Markdown, so a verdict is read with them."""
    for path in (csv_path, md_path):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(csv_path, index=False)
    counts = frame["verdict"].value_counts().to_dict()
    summary = ", ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS)
    lines = claims_markdown(frame, "Paper claims and their verdicts")
    counted = [f"{len(frame)} claims: {summary}.", "", "; ".join(tally(frame)) + "."]
    lines[1:1] = ["", scale_line.strip(), "", *counted] if scale_line else ["", *counted]
    if changed_settings:
        lines += ["", "## Settings that differ from the papers' (docs/paper_settings.md)", "",
                  f"This run changed {len(changed_settings)} audited paper-scale setting(s):", "",
                  *[f"- {line}" for line in changed_settings]]
    Path(md_path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def verdict_lines(claims_file: str | os.PathLike, units: Mapping[str, str | os.PathLike], *, scale: str,
                  skip: Mapping[str, str] | None = None, alpha: float = 0.05, confidence: float = 0.95,
                  n_resamples: int = DEFAULT_RESAMPLES, n_permutations: int = DEFAULT_PERMUTATIONS,
                  seed: int = 0) -> list[str]:
    """Markdown lines for the end of a table: the claims whose references all lie in ``units``' tables,
    evaluated on those units (the table's own seeds; results/claims.md has the claim seeds)."""
    claims = [c for c in load_claims(claims_file)
              if {r.table for r in references(c["rule"], str(c["id"]))} <= set(units)]
    if not claims:
        return []
    frame = evaluate_claims(claims, units, scale=scale, skip=skip, alpha=alpha, confidence=confidence,
                            n_resamples=n_resamples, n_permutations=n_permutations, seed=seed)
    seeds = sorted({int(s) for s in frame["n_seeds"].dropna()})
    lines = claims_markdown(frame, "Claims on this table", heading="##")
    if seeds:
        lines.insert(2, f"Computed on this table's own rows ({'/'.join(map(str, seeds))} seed(s) per trained row); "
                        "`results/claims.md` gives every claim over the claim seeds.")
    else:
        lines.insert(2, f"None of this table's claims is built at {scale} scale (the notes say why).")
    lines.insert(3, "")
    return lines


def table_verdict_lines(claims_file: str | os.PathLike | None, units: Mapping[str, str | os.PathLike],
                        claims: Mapping[str, Any] | None) -> list[str]:
    """``verdict_lines`` with a rule's ``claims_params()`` (scale, skip, alpha, confidence, resamples);
    empty without a claims file."""
    if not claims_file or claims is None:
        return []
    return verdict_lines(claims_file, dict(units), scale=claims["scale"], skip=claims.get("skip") or {},
                         alpha=claims["alpha"], confidence=claims["confidence"],
                         n_resamples=claims["bootstrap_resamples"], n_permutations=claims["permutation_resamples"])
