"""The verdict table of the claims (multivec.statistics.claims; docs/statistics.md § Claims), kind by kind, on
synthetic per-unit scores whose truth is known: for every kind a case that holds, one that is contradicted and
one that is inconclusive; the multiplicity rule within a claim (intersection-union for holds, Bonferroni/Holm for
contradicted); the sub-test that decides; and the margin sources and origins the claims file must state."""

import numpy as np
import pandas as pd
import pytest
import yaml

from multivec.statistics import Measurement, write_units
from multivec.statistics.claims import SUB_TEST_COLUMNS, assess_claims, claims_markdown, tally
from multivec.statistics.claims_file import ClaimError, check_claim_origins, load_claims

N = 400
SEEDS = (1, 2, 3)


def _standard(rng, n):
    """n draws with mean exactly 0 and SD exactly 1, so a row's offset is its exact mean difference."""
    x = rng.normal(0, 1, n)
    return (x - x.mean()) / x.std()


@pytest.fixture(scope="module")
def units(tmp_path_factory):
    """Rows of metric m over N shared units, each ``base + offset + noise``; the noise is the same at every seed
    (so the seed mean keeps it) plus a tiny per-seed jitter.

    B (untrained, the reference); X = B + 10 (tight); X2 = B + 20; Xflat = B + 10.05; Bminus = B - 1;
    Bsmall = B + 0.2; W = B + 0.3 with a wide CI (noise SD 30); Xwide = B + 10 with SD 30; L: about 5 (SD 0.5);
    Edge = B - 1 with noise SD 8 (CI half-width about 0.8); Gain = B + 1 with SD 8."""
    rng = np.random.default_rng(7)
    names = [f"q{i}" for i in range(N)]
    base = rng.random(N) * 100
    rows = {"X": (10, 0.5), "X2": (20, 0.5), "Xflat": (10.05, 0.5), "Bminus": (-1, 0.5), "Bsmall": (0.2, 0.5),
            "W": (0.3, 30), "Xwide": (10, 30), "Edge": (-1, 8), "Gain": (1, 8)}
    ms = [Measurement("B", "m", "mean", names, base, None),
          Measurement("L", "m", "mean", names, 5 + 0.5 * _standard(rng, N), None)]
    for row, (offset, sd) in rows.items():
        noise = sd * _standard(rng, N)
        for seed in SEEDS:
            jitter = 0.01 * _standard(rng, N)
            ms.append(Measurement(row, "m", "mean", names, base + offset + noise + jitter - jitter.mean(), seed))
    path = tmp_path_factory.mktemp("verdict_units") / "t.parquet"
    write_units(path, ms)
    return path


def _claims(tmp_path, rules, origin="paper"):
    claims = [{"id": f"C{k}", "work": "nugget", "origin": origin, "claim": f"claim {k}", "source": "synthetic",
               "margin_source": "ours: a synthetic test", "rule": {"table": "t", "metric": "m", **rule}}
              for k, rule in enumerate(rules)]
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({"claims": claims}))
    return load_claims(path)


def assess(tmp_path, units, *rules, **kwargs):
    return assess_claims(_claims(tmp_path, rules), {"t": units}, scale="demo", n_resamples=500, n_permutations=500,
                         **kwargs)


def verdicts(tmp_path, units, *rules):
    return assess(tmp_path, units, *rules).claims["verdict"].tolist()


def r(row):
    return {"row": row}


def pair(kind, a, b, **extra):
    return {"kind": kind, "a": r(a), "b": r(b), **extra}


# -- each kind: holds, contradicted, inconclusive ------------------------------------------------------------------

def test_greater(tmp_path, units):
    results = assess(tmp_path, units,
                     pair("greater", "X", "B"),                 # +10, tight
                     pair("greater", "X", "B", margin=5),       # +10 > 5
                     pair("greater", "B", "X"),                 # -10: the opposite, significantly
                     pair("greater", "X", "B", margin=15),      # +10, significantly below the margin 15
                     pair("greater", "W", "B"),                 # +0.3 with a CI of about ±3
                     pair("greater", "X", "B", margin=10))      # the CI straddles the margin
    frame = results.claims
    assert frame["verdict"].tolist() == ["holds", "holds", "contradicted", "contradicted", "inconclusive",
                                         "inconclusive"]
    assert "by less than the margin 15" in frame["note"].iloc[3]  # significant, but smaller than claimed
    assert frame["difference"].iloc[0] == pytest.approx(10, abs=0.05)


def test_not_worse_is_non_inferiority(tmp_path, units):
    assert verdicts(tmp_path, units,
                    pair("not_worse", "Bminus", "B", margin=2),    # -1 [-1.1, -0.9] >= -2
                    pair("not_worse", "X", "B", margin=0),         # better: holds at margin 0
                    pair("not_worse", "Bminus", "B", margin=0.5),  # the whole CI below -0.5
                    pair("not_worse", "Bminus", "B", margin=0),    # the whole CI below 0
                    pair("not_worse", "Bminus", "B", margin=1),    # the CI straddles -1
                    pair("not_worse", "W", "B", margin=1)          # too wide to tell
                    ) == ["holds", "holds", "contradicted", "contradicted", "inconclusive", "inconclusive"]


def test_not_worse_notes_a_margin_the_sample_cannot_resolve(tmp_path, units):
    frame = assess(tmp_path, units, pair("not_worse", "W", "B", margin=1)).claims
    assert "cannot hold at this sample size" in frame["note"].iloc[0] and "margin 1" in frame["note"].iloc[0]


def test_within_is_equivalence(tmp_path, units):
    assert verdicts(tmp_path, units,
                    pair("within", "Bsmall", "B", delta=1),
                    pair("within", "X", "B", delta=1),
                    pair("within", "B", "X", delta=1),        # outside on the other side
                    pair("within", "W", "B", delta=1),
                    pair("within", "Bminus", "B", delta=1)    # -1: the CI straddles -delta
                    ) == ["holds", "contradicted", "contradicted", "inconclusive", "inconclusive"]


def test_level(tmp_path, units):
    def level(bound, value, row="L"):
        return {"kind": "level", "ref": r(row), bound: value}

    results = assess(tmp_path, units,
                     level("at_least", 4), level("above", 4.9), level("at_most", 6), level("below", 5.1),
                     level("at_least", 6), level("above", 5.5), level("at_most", 4), level("below", 4.5),
                     level("at_least", 5), level("at_most", 5), level("above", 5), level("below", 5))
    assert results.claims["verdict"].tolist() == ["holds"] * 4 + ["contradicted"] * 4 + ["inconclusive"] * 4
    # The decided difference is the statistic minus the level, so its sign says the side.
    assert results.claims["difference"].iloc[0] == pytest.approx(1, abs=0.01)
    assert results.claims["difference"].iloc[4] == pytest.approx(-1, abs=0.01)
    row = results.comparisons.iloc[0]
    assert row["b"] == "level: at_least 4" and np.isnan(row["p"]) and row["passes"] == "holds"


def test_level_at_the_bound_of_a_point_ci_is_not_strictly_above(tmp_path):
    names = [f"q{i}" for i in range(30)]
    path = tmp_path / "flat.parquet"
    write_units(path, [Measurement("F", "m", "mean", names, np.zeros(30), None)])
    frame = assess_claims(_claims(tmp_path, [{"kind": "level", "ref": r("F"), "above": 0},
                                             {"kind": "level", "ref": r("F"), "at_least": 0}]),
                          {"t": path}, scale="demo", n_resamples=100, n_permutations=100).claims
    assert frame["verdict"].tolist() == ["contradicted", "holds"]  # a gain of exactly 0 is not positive


def test_monotone(tmp_path, units):
    assert verdicts(tmp_path, units,
                    {"kind": "monotone", "direction": "increasing", "items": [r("B"), r("X"), r("X2")]},
                    {"kind": "monotone", "direction": "decreasing", "items": [r("X2"), r("X"), r("B")]},
                    # a noisy step in the middle is allowed: first -> last decides
                    {"kind": "monotone", "direction": "increasing", "items": [r("B"), r("W"), r("X")]},
                    {"kind": "monotone", "direction": "decreasing", "items": [r("B"), r("X"), r("X2")]},
                    {"kind": "monotone", "direction": "increasing", "items": [r("B"), r("X2"), r("X")]},  # a step down
                    {"kind": "monotone", "direction": "increasing", "items": [r("B"), r("W")]},
                    ) == ["holds", "holds", "holds", "contradicted", "contradicted", "inconclusive"]


def test_saturates(tmp_path, units):
    assert verdicts(tmp_path, units,
                    {"kind": "saturates", "delta": 1, "items": [r("B"), r("X"), r("Xflat")]},
                    {"kind": "saturates", "delta": 1, "items": [r("B"), r("X"), r("X2")]},   # last step +10
                    {"kind": "saturates", "delta": 1, "items": [r("B"), r("X"), r("Xwide")]},  # last step unknown
                    ) == ["holds", "contradicted", "inconclusive"]


def test_saturates_alone_holds_for_a_curve_flat_at_the_floor_and_a_level_catches_it(tmp_path, units):
    # B -> X -> Xflat saturates at about 60; a claim that it saturates near 100 needs the level.
    assert verdicts(tmp_path, units,
                    {"kind": "saturates", "delta": 1, "items": [r("B"), r("X"), r("Xflat")]},
                    {"kind": "all_of", "rules": [{"kind": "saturates", "delta": 1,
                                                  "items": [r("B"), r("X"), r("Xflat")]},
                                                 {"kind": "level", "ref": r("Xflat"), "above": 99}]},
                    ) == ["holds", "contradicted"]


def test_ordering_and_peak(tmp_path, units):
    assert verdicts(tmp_path, units,
                    {"kind": "ordering", "items": [r("X2"), r("X"), r("B")]},
                    {"kind": "ordering", "items": [r("X"), r("X2"), r("B")]},
                    {"kind": "ordering", "items": [r("X"), r("W"), r("B")]},
                    {"kind": "peak", "items": [r("X2"), r("X"), r("B")]},
                    {"kind": "peak", "items": [r("X"), r("X2"), r("B")]},
                    {"kind": "peak", "items": [r("W"), r("B"), r("Bsmall")]},
                    ) == ["holds", "contradicted", "inconclusive", "holds", "contradicted", "inconclusive"]


def test_all_of(tmp_path, units):
    assert verdicts(tmp_path, units,
                    {"kind": "all_of", "rules": [pair("greater", "X", "B"), pair("within", "Bsmall", "B", delta=1)]},
                    {"kind": "all_of", "rules": [pair("greater", "X", "B"), pair("greater", "B", "X")]},
                    {"kind": "all_of", "rules": [pair("greater", "X", "B"), pair("greater", "W", "B")]},
                    ) == ["holds", "contradicted", "inconclusive"]


# -- multiplicity within a claim -----------------------------------------------------------------------------------

def test_a_contradiction_by_one_of_many_sub_tests_is_bonferroni_adjusted(tmp_path, units):
    # Edge - B = -1 with a 95% CI of about [-1.8, -0.2]: alone it contradicts "not worse (margin 0)"; one of
    # twelve, its Bonferroni CI (99.6%, about [-2.2, +0.2]) reaches 0, so the claim is not contradicted by it.
    alone = pair("not_worse", "Edge", "B", margin=0)
    many = {"kind": "all_of", "rules": [alone] + [pair("not_worse", "X", "B", margin=0)] * 11}
    results = assess(tmp_path, units, alone, many)
    assert results.claims["verdict"].tolist() == ["contradicted", "inconclusive"]
    edge = results.comparisons[(results.comparisons["claim"] == "C1") & (results.comparisons["sub_test"] == "1.1")]
    edge = edge.iloc[0]
    assert edge["difference_hi"] < 0 < edge["adjusted_hi"]
    assert edge["confidence_adjusted"] == pytest.approx(1 - 0.05 / 12) and edge["confidence"] == 0.95
    assert edge["passes"] == "inconclusive" and edge["decided"]


def test_holds_needs_every_part_and_no_adjustment(tmp_path, units):
    # Gain - B = +1 with a 95% CI of about [0.2, 1.8]: each part holds at 95%, so twelve of them hold together
    # (intersection-union); a Bonferroni CI would have reached 0.
    many = {"kind": "all_of", "rules": [pair("not_worse", "Gain", "B", margin=0)] * 12}
    results = assess(tmp_path, units, many)
    assert results.claims["verdict"].tolist() == ["holds"]
    assert (results.comparisons["adjusted_lo"] < 0).all() and (results.comparisons["difference_lo"] > 0).all()


def test_p_values_are_holm_adjusted_within_the_claim(tmp_path, units):
    results = assess(tmp_path, units, {"kind": "all_of", "rules": [pair("greater", "X", "B"),
                                                                  pair("greater", "W", "B")]})
    p, adjusted = results.comparisons["p"].to_numpy(), results.comparisons["p_adjusted"].to_numpy()
    low, high = np.argmin(p), np.argmax(p)
    assert adjusted[low] == pytest.approx(min(1.0, 2 * p[low]))
    assert adjusted[high] == pytest.approx(max(p[high], adjusted[low]))


# -- the sub-test that decided -------------------------------------------------------------------------------------

def test_every_sub_test_is_written_and_one_decides(tmp_path, units):
    results = assess(tmp_path, units,
                     {"kind": "all_of", "rules": [pair("greater", "X", "B"), pair("greater", "B", "X2"),
                                                  pair("greater", "X2", "B")]},
                     {"kind": "all_of", "rules": [pair("greater", "X2", "B"), pair("greater", "Gain", "B")]},
                     {"kind": "all_of", "rules": [pair("greater", "X", "B"), pair("greater", "W", "B"),
                                                  {"kind": "monotone", "direction": "increasing",
                                                   "items": [r("B"), r("W"), r("Xwide")]}]})
    c = results.comparisons
    assert list(c.columns) == SUB_TEST_COLUMNS
    assert c["n_seeds"].tolist() == [3] * len(c)
    assert c.groupby("claim")["decided"].sum().tolist() == [1, 1, 1]
    decided = c[c["decided"]].set_index("claim")
    # contradicted: the contradicted sub-test, not the first one
    assert decided.loc["C0", "sub_test"] == "2.1" and decided.loc["C0", "passes"] == "contradicted"
    # holds: the weakest of the passing sub-tests (Gain - B = +1 is weaker than X2 - B = +20)
    assert decided.loc["C1", "sub_test"] == "2.1" and decided.loc["C1", "passes"] == "holds"
    # inconclusive: the first that had to hold and did not
    assert decided.loc["C2", "sub_test"] == "2.1" and decided.loc["C2", "passes"] == "inconclusive"
    assert c[c["claim"] == "C2"]["sub_test"].tolist() == ["1.1", "2.1", "3.1", "3.2", "3.3"]
    assert c[c["claim"] == "C2"]["required"].tolist() == ["holds", "holds", "not contradicted",
                                                          "not contradicted", "holds"]
    frame = results.claims
    assert frame["decided_by"].tolist() == ["2.1 greater: B − X2 m", "2.1 greater: Gain − B m", "2.1 greater: W − B m"]
    # the contradicted claim shows its Bonferroni CI (3 sub-tests)
    assert frame["ci_level"].tolist() == [pytest.approx(1 - 0.05 / 3), 0.95, 0.95]
    md = "\n".join(claims_markdown(frame))
    assert "2.1 greater: B − X2 m: -20.00 [" in md and "(98.33% CI), p = " in md


def test_the_tally_keeps_the_papers_claims_and_our_targets_apart(tmp_path, units):
    paper = assess(tmp_path, units, pair("greater", "X", "B"), pair("greater", "B", "X")).claims
    ours = paper.assign(origin="ours", id=["C2", "C3"])
    lines = tally(pd.concat([paper, ours.iloc[:1]], ignore_index=True))
    assert lines == ["papers' claims (2): 1 holds, 1 contradicted, 0 inconclusive, 0 not built",
                     "our targets (1): 1 holds, 0 contradicted, 0 inconclusive, 0 not built"]


# -- what the claims file must state -------------------------------------------------------------------------------

def _load(tmp_path, claim):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"claims": [{"id": "X", "work": "w", "claim": "c", "source": "s", **claim}]}))
    return load_claims(path)


REF = {"table": "t", "row": "A", "metric": "m"}


@pytest.mark.parametrize("rule", [
    {"kind": "greater", "a": REF, "b": REF, "margin": 0},
    {"kind": "not_worse", "a": REF, "b": REF, "margin": 2},
    {"kind": "within", "a": REF, "b": REF, "delta": 1},
    {"kind": "level", "ref": REF, "at_least": 99},
    {"kind": "saturates", "items": [REF, REF], "delta": 1},
    {"kind": "all_of", "rules": [{"kind": "greater", "a": REF, "b": REF},
                                 {"kind": "level", "ref": REF, "below": 3}]},
])
def test_a_margin_delta_or_level_without_a_source_is_refused(tmp_path, rule):
    with pytest.raises(ClaimError, match="without a stated source"):
        _load(tmp_path, {"rule": rule})
    for sourced in ({"margin_source": "Table 2: the paper's gap"}, ):
        _load(tmp_path, {"rule": rule, **sourced})  # on the claim
        _load(tmp_path, {"rule": {**rule, **sourced}})  # on the rule
        _load(tmp_path, {"rule": {"kind": "all_of", "rules": [rule], **sourced}})  # on an all_of above it


def test_a_rule_without_a_margin_needs_no_source(tmp_path):
    (claim,) = _load(tmp_path, {"rule": {"kind": "greater", "a": REF, "b": REF}})
    assert claim["id"] == "X" and claim["rule"]["kind"] == "greater" and "margin_source" not in claim


@pytest.mark.parametrize("rule, message", [
    ({"kind": "level", "ref": REF}, "level needs"),
    ({"kind": "level", "ref": REF, "at_least": 1, "at_most": 2}, "level needs"),
    ({"kind": "level", "at_least": 1}, "level needs"),
    ({"kind": "greater", "a": REF, "b": REF, "margin": -1}, "margin.*>= 0"),
    ({"kind": "within", "a": REF, "b": REF, "delta": 0}, "delta` > 0"),
])
def test_malformed_levels_and_margins_are_refused(tmp_path, rule, message):
    with pytest.raises(ClaimError, match=message):
        _load(tmp_path, {"rule": rule, "margin_source": "ours"})


def test_origin_is_paper_or_ours(tmp_path):
    with pytest.raises(ClaimError, match="origin must be one of"):
        _load(tmp_path, {"origin": "theirs", "rule": {"kind": "greater", "a": REF, "b": REF}})
    claims = _load(tmp_path, {"rule": {"kind": "greater", "a": REF, "b": REF}})
    with pytest.raises(ClaimError, match=r"\['X'\] need `origin: paper` or `origin: ours`"):
        check_claim_origins(claims)
