"""Paper claims as data, with verdicts computed from per-unit scores.

The claims live in one file (``config/claims.yaml``; its header documents the format). Each claim
has a ``rule`` of one of the kinds in ``KINDS``; the rule's references name ``{table, row, metric}``
in the tables' unit files (``multivec.statistics.units``). Every pairwise comparison inside a claim
is a paired test over the same evaluation units (``resampling.paired_difference``: the difference
of the seed means, its paired bootstrap CI and the randomization p-value); the p-values of one
claim's tests are Holm-corrected together, and the verdict is one of

- ``holds``: the data support the claim at ``alpha``;
- ``contradicted``: the data support the opposite at ``alpha``;
- ``inconclusive``: neither (including "too noisy to tell");
- ``not built``: an input of the claim is not built at this scale (the note says which and why).

Reading and checking the file (``load_claims``, ``check_claims``, ``references``) is
``multivec.statistics.claims_file``, which the workflow imports while it parses.

Each work's claims are evaluated on their own (``results/claims/<work>.csv``: a work's claims only need
that work's models) and ``merge_claims`` joins them into ``results/claims.csv``. Every test is seeded
alone and Holm-corrected within its claim, so a claim's row is the same whichever claims it is evaluated
with.
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
from multivec.statistics.claims_file import ClaimError, Reference, load_claims, parse_reference, references
from multivec.statistics.tables import format_p
from multivec.statistics.units import SeedStack, read_units, stack_seeds

VERDICTS = ("holds", "contradicted", "inconclusive", "not built")
CLAIM_COLUMNS = ["id", "work", "claim", "source", "rule", "scale", "n_seeds", "paper", "ours", "difference",
                 "difference_lo", "difference_hi", "p_holm", "tests", "verdict", "note"]


# ---------------------------------------------------------------- evaluation

@dataclass
class _Context:
    stacks: dict[Reference, SeedStack]
    confidence: float
    n_resamples: int
    n_permutations: int
    seed: int
    tests: dict[tuple[Reference, Reference], PairedDifference] = field(default_factory=dict)

    def test(self, a: Reference, b: Reference) -> PairedDifference:
        if (a, b) not in self.tests:
            self.tests[(a, b)] = paired_difference(self.stacks[a], self.stacks[b], self.confidence,
                                                   self.n_resamples, self.n_permutations, self.seed)
        return self.tests[(a, b)]


@dataclass
class _Outcome:
    verdict: str
    primary: tuple[Reference, Reference] | None


def _pairs(rule: dict[str, Any], defaults: Mapping[str, Any]) -> list[tuple[Reference, Reference]]:
    """The pairwise tests a rule needs, in a fixed order."""
    kind = rule["kind"]
    defaults = {**defaults, **{k: rule[k] for k in ("table", "row", "metric") if k in rule}}
    if kind == "all_of":
        return [p for sub in rule["rules"] for p in _pairs(sub, defaults)]
    if kind in ("greater", "not_worse", "within"):
        return [(parse_reference(rule["a"], defaults, ""), parse_reference(rule["b"], defaults, ""))]
    items = [parse_reference(i, defaults, "") for i in rule["items"]]
    if kind == "peak":
        return [(items[0], other) for other in items[1:]]
    if kind == "monotone" and rule["direction"] == "decreasing":
        items = items[::-1]  # test as increasing over the reversed list: the same pairs, signs flipped
    steps = list(zip(items[:-1], items[1:]))
    if kind in ("monotone", "saturates") and len(items) > 2:
        steps.append((items[0], items[-1]))
    return [(b, a) for a, b in steps] if kind in ("monotone", "saturates") else steps


def _evaluate(rule: dict[str, Any], defaults: Mapping[str, Any], p_adjusted: dict, ctx: _Context,
              alpha: float) -> _Outcome:
    kind = rule["kind"]
    defaults = {**defaults, **{k: rule[k] for k in ("table", "row", "metric") if k in rule}}
    if kind == "all_of":
        outcomes = [_evaluate(sub, defaults, p_adjusted, ctx, alpha) for sub in rule["rules"]]
        return _Outcome(_combine([o.verdict for o in outcomes]), outcomes[0].primary)
    pairs = _pairs(rule, defaults)

    def significant(pair, sign):  # sign +1: first significantly above second
        d = ctx.test(*pair)
        return p_adjusted[pair] < alpha and sign * d.difference > 0

    if kind == "greater":
        pair = pairs[0]
        d, margin = ctx.test(*pair), float(rule.get("margin", 0))
        if significant(pair, +1) and d.lo > margin:
            return _Outcome("holds", pair)
        if significant(pair, -1) or (margin > 0 and d.hi < margin):
            return _Outcome("contradicted", pair)
        return _Outcome("inconclusive", pair)
    if kind == "not_worse":
        pair = pairs[0]
        d, margin = ctx.test(*pair), float(rule.get("margin", 0))
        verdict = "holds" if d.lo >= -margin else "contradicted" if d.hi < -margin else "inconclusive"
        return _Outcome(verdict, pair)
    if kind == "within":
        pair = pairs[0]
        d, delta = ctx.test(*pair), float(rule["delta"])
        if -delta <= d.lo and d.hi <= delta:
            return _Outcome("holds", pair)
        if d.hi < -delta or d.lo > delta:
            return _Outcome("contradicted", pair)
        return _Outcome("inconclusive", pair)
    if kind in ("ordering", "peak"):
        verdicts = ["holds" if significant(p, +1) else "contradicted" if significant(p, -1) else "inconclusive"
                    for p in pairs]
        return _Outcome(_combine(verdicts), pairs[0])
    # monotone / saturates: pairs are (later, earlier) steps, then (last, first) when > 2 items
    steps, overall = (pairs[:-1], pairs[-1]) if len(pairs) > 1 else (pairs, pairs[0])
    against = any(significant(p, -1) for p in pairs)
    rises = significant(overall, +1) and not against
    if kind == "monotone":
        return _Outcome("holds" if rises else "contradicted" if against else "inconclusive", overall)
    last = ctx.test(*steps[-1])
    delta = float(rule["delta"])
    flat = -delta <= last.lo and last.hi <= delta
    if rises and flat:
        return _Outcome("holds", overall)
    if against or last.lo > delta:
        return _Outcome("contradicted", overall)
    return _Outcome("inconclusive", overall)


def _combine(verdicts: Sequence[str]) -> str:
    if "contradicted" in verdicts:
        return "contradicted"
    if all(v == "holds" for v in verdicts):
        return "holds"
    return "inconclusive"


def _estimate_text(stack: SeedStack, confidence: float, n_resamples: int, seed: int) -> str:
    mean, sd = point_estimate(stack)
    lo, hi = bootstrap_ci(stack, confidence, n_resamples, seed)
    text = f"{stack.row} {stack.metric} {mean:.2f} [{lo:.2f}, {hi:.2f}]"
    return text + (f" ±{sd:.2f}" if not math.isnan(sd) else "")


def _rule_text(rule: dict[str, Any]) -> str:
    kind = rule["kind"]
    extras = ", ".join(f"{k}={rule[k]}" for k in ("direction", "margin", "delta") if k in rule)
    if kind == "all_of":
        return "all of (" + "; ".join(_rule_text(sub) for sub in rule["rules"]) + ")"
    return kind + (f" ({extras})" if extras else "")


def evaluate_claims(claims: Sequence[dict[str, Any]], units: Mapping[str, str | os.PathLike], *, scale: str,
                    skip: Mapping[str, str] | None = None, not_built: Mapping[str, str] | None = None,
                    alpha: float = 0.05, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                    n_permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0) -> pd.DataFrame:
    """One row per claim (``CLAIM_COLUMNS``). ``units``: ``{table: unit file}`` of the tables built;
    ``not_built``: ``{table: why}`` for tables this scale does not build; ``skip``: ``{claim id: why}``."""
    skip, not_built = dict(skip or {}), dict(not_built or {})
    stacks: dict[Reference, SeedStack] = {}
    for table, path in units.items():
        for (row, metric), stack in stack_seeds(read_units(path)).items():
            stacks[Reference(table, row, metric)] = stack
    ctx = _Context(stacks, confidence, n_resamples, n_permutations, seed)
    records = []
    for claim in claims:
        refs = references(claim["rule"], str(claim["id"]))
        record = {"id": claim["id"], "work": claim["work"], "claim": claim["claim"], "source": claim["source"],
                  "rule": _rule_text(claim["rule"]), "scale": scale, "paper": _paper_text(claim.get("paper")),
                  "n_seeds": None, "ours": "", "difference": None, "difference_lo": None, "difference_hi": None,
                  "p_holm": None, "tests": 0, "verdict": "not built", "note": ""}
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
            pairs = list(dict.fromkeys(_pairs(claim["rule"], {})))
            p_raw = [ctx.test(*pair).p for pair in pairs]
            p_adjusted = dict(zip(pairs, holm(p_raw)))
            outcome = _evaluate(claim["rule"], {}, p_adjusted, ctx, alpha)
            trained = [r for r in dict.fromkeys(refs) if stacks[r].seeds != [None]]
            # Untrained rows are deterministic: the seed count is that of the trained rows compared.
            n_seeds = min(stacks[r].n_seeds for r in trained) if trained else 1
            record.update(verdict=outcome.verdict, tests=len(pairs), n_seeds=n_seeds,
                          ours="; ".join(_estimate_text(stacks[r], confidence, n_resamples, seed)
                                         for r in dict.fromkeys(refs)))
            if outcome.primary is not None:
                d = ctx.test(*outcome.primary)
                record.update(difference=d.difference, difference_lo=d.lo, difference_hi=d.hi,
                              p_holm=float(p_adjusted[outcome.primary]))
            if trained and n_seeds == 1:
                record["note"] = "verdict from one training seed"
        records.append(record)
    return pd.DataFrame.from_records(records, columns=CLAIM_COLUMNS)


def _paper_text(paper: Any) -> str:
    if paper is None:
        return ""
    if isinstance(paper, dict):
        return "; ".join(f"{k}: {v}" for k, v in paper.items())
    return str(paper)


# ---------------------------------------------------------------- writing

def _difference_text(record: Mapping[str, Any]) -> str:
    if record["difference"] is None or (isinstance(record["difference"], float) and math.isnan(record["difference"])):
        return ""
    return (f"{record['difference']:+.2f} [{record['difference_lo']:+.2f}, {record['difference_hi']:+.2f}], "
            f"p = {format_p(record['p_holm'])}")


def claims_markdown(frame: pd.DataFrame, title: str = "Claims", heading: str = "#") -> list[str]:
    """Markdown lines: one table row per claim with its verdict."""
    lines = [f"{heading} {title}", "",
             "Verdicts computed from the per-unit scores by `multivec.statistics.claims` with the rules of "
             "`config/claims.yaml` (difference: first − second of the claim's primary comparison, seed means, "
             "95% paired bootstrap CI; p: paired randomization test, Holm-corrected within the claim).", ""]
    rows = []
    for r in frame.to_dict("records"):
        seeds = "" if r["n_seeds"] is None or (isinstance(r["n_seeds"], float) and math.isnan(r["n_seeds"])) \
            else str(int(r["n_seeds"]))
        rows.append([f"{r['id']}", f"{r['claim']}", f"{r['source']}", f"{r['paper']}", f"{r['ours']}",
                     _difference_text(r), seeds, f"**{r['verdict']}**", f"{r['note']}"])
    return lines + markdown_table(["id", "claim", "source", "paper", "ours", "difference, p", "seeds", "verdict",
                                   "note"], rows)


TEXT_COLUMNS = ("id", "work", "claim", "source", "rule", "scale", "paper", "ours", "verdict", "note")


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
    lines[1:1] = ["", scale_line.strip(), "", f"{len(frame)} claims: {summary}."] if scale_line else \
        ["", f"{len(frame)} claims: {summary}."]
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
