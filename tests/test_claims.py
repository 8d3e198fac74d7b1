"""Claims as data (config/claims.yaml) and their computed verdicts (multivec.statistics.claims)."""

import numpy as np
import pytest
import yaml

from multivec.statistics import Measurement, write_units
from multivec.statistics.claims import (assess_claims, evaluate_claims, merge_claims, merge_comparisons, read_claims,
                                        read_comparisons, verdict_lines, write_claims)
from multivec.statistics.claims_file import (ClaimError, check_claim_origins, check_claims, claim_works, claims_of_work,
                                             load_claims)

N = 300


@pytest.fixture(scope="module")
def unit_file(tmp_path_factory):
    """Rows with known differences: A ≈ A2 > C (by 2) > B (by 18); three seeds for the trained rows."""
    rng = np.random.default_rng(0)
    names = [f"q{i}" for i in range(N)]
    base = rng.random(N) * 100
    ms = [Measurement("B", "m", "mean", names, base, None)]
    for seed in (1, 2, 3):
        ms.append(Measurement("A", "m", "mean", names, base + 20 + rng.normal(0, 5, N), seed))
        ms.append(Measurement("A2", "m", "mean", names, base + 20 + rng.normal(0, 5, N), seed))
        ms.append(Measurement("C", "m", "mean", names, base + 18 + rng.normal(0, 5, N), seed))
    path = tmp_path_factory.mktemp("units") / "t.parquet"
    write_units(path, ms)
    return path


def claims_file(tmp_path, *rules):
    claims = [{"id": f"C{k}", "work": "nugget", "origin": "paper", "claim": f"claim {k}", "source": "Table 2",
               "margin_source": "ours: a test", "paper": {"A": 1.0}, "rule": {"table": "t", "metric": "m", **rule}}
              for k, rule in enumerate(rules)]
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({"claims": claims}))
    return path


def verdicts(tmp_path, unit_file, *rules, **kwargs):
    frame = evaluate_claims(load_claims(claims_file(tmp_path, *rules)), {"t": unit_file}, scale="demo",
                            n_resamples=300, n_permutations=300, **kwargs)
    return frame["verdict"].tolist(), frame


def ref(row):
    return {"row": row}


def test_pairwise_verdicts(tmp_path, unit_file):
    got, frame = verdicts(
        tmp_path, unit_file,
        {"kind": "greater", "a": ref("A"), "b": ref("B")},
        {"kind": "greater", "a": ref("B"), "b": ref("A")},
        {"kind": "greater", "a": ref("A"), "b": ref("A2")},
        {"kind": "greater", "a": ref("A"), "b": ref("B"), "margin": 30},  # 20 is significantly below 30
        {"kind": "not_worse", "a": ref("A"), "b": ref("B")},
        {"kind": "within", "a": ref("A"), "b": ref("A2"), "delta": 2},
        {"kind": "within", "a": ref("A"), "b": ref("B"), "delta": 2},
    )
    assert got == ["holds", "contradicted", "inconclusive", "contradicted", "holds", "holds", "contradicted"]
    assert frame["n_seeds"].tolist()[0] == 3  # B is untrained: the trained row's seeds count
    assert frame["difference"].iloc[0] == pytest.approx(20, abs=1.5)


def test_sequence_verdicts(tmp_path, unit_file):
    got, _ = verdicts(
        tmp_path, unit_file,
        {"kind": "monotone", "direction": "increasing", "items": [ref("B"), ref("C"), ref("A")]},
        {"kind": "monotone", "direction": "decreasing", "items": [ref("B"), ref("C"), ref("A")]},
        {"kind": "monotone", "direction": "decreasing", "items": [ref("A"), ref("C"), ref("B")]},
        {"kind": "saturates", "delta": 5, "items": [ref("B"), ref("C"), ref("A")]},
        {"kind": "saturates", "delta": 5, "items": [ref("B"), ref("A")]},  # last step (+20) is not flat
        {"kind": "ordering", "items": [ref("A"), ref("C"), ref("B")]},
        {"kind": "peak", "items": [ref("A"), ref("C"), ref("B")]},
        {"kind": "peak", "items": [ref("A"), ref("A2"), ref("B")]},
        {"kind": "all_of", "rules": [{"kind": "greater", "a": ref("A"), "b": ref("B")},
                                     {"kind": "greater", "a": ref("A"), "b": ref("A2")}]},
    )
    assert got == ["holds", "contradicted", "holds", "holds", "contradicted", "holds", "holds", "inconclusive",
                   "inconclusive"]


def test_one_seed_is_noted_and_skips_and_unbuilt_tables_are_not_built(tmp_path):
    names = [f"q{i}" for i in range(50)]
    path = tmp_path / "one.parquet"
    write_units(path, [Measurement("A", "m", "mean", names, np.arange(50.0) + 5, 13),
                       Measurement("B", "m", "mean", names, np.arange(50.0), None)])
    claims = load_claims(claims_file(tmp_path, {"kind": "greater", "a": ref("A"), "b": ref("B")},
                                     {"kind": "greater", "a": ref("A"), "b": ref("B")},
                                     {"kind": "greater", "a": {"table": "paper_only", "row": "A", "metric": "m"},
                                      "b": {"table": "paper_only", "row": "B", "metric": "m"}}))
    frame = evaluate_claims(claims, {"t": path}, scale="smoke", skip={"C1": "smoke trains r = 0.1 only"},
                            not_built={"paper_only": "IMDB is paper scale"}, n_resamples=100, n_permutations=100)
    assert frame["verdict"].tolist() == ["holds", "not built", "not built"]
    assert "one training seed" in frame["note"].iloc[0]
    assert "smoke trains" in frame["note"].iloc[1] and "IMDB is paper scale" in frame["note"].iloc[2]
    write_claims(frame, tmp_path / "c.csv", tmp_path / "c.md", "Scale: smoke")
    md = (tmp_path / "c.md").read_text()
    assert "**holds**" in md and "1 holds, 0 contradicted, 0 inconclusive, 2 not built" in md
    assert "papers' claims (3): 1 holds, 0 contradicted, 0 inconclusive, 2 not built." in md
    assert "Settings that differ" not in md  # none changed: the page is as before
    # A paper-scale run that changed audited settings lists them at the end of the page.
    write_claims(frame, tmp_path / "c.csv", tmp_path / "p.md", "Scale: paper",
                 changed_settings=["train.grad_accumulation (NUGGET, ...): this run 1, paper scale 4 (paper: ...)"])
    paper_md = (tmp_path / "p.md").read_text()
    assert paper_md.startswith(md.replace("Scale: smoke", "Scale: paper").rstrip("\n"))
    assert paper_md.rstrip().endswith("- train.grad_accumulation (NUGGET, ...): this run 1, paper scale 4 (paper: ...)")
    assert "## Settings that differ from the papers' (docs/paper_settings.md)" in paper_md


def two_works_claims(tmp_path):
    """Claims of two works, interleaved in the file, with a skipped and an unbuilt one among them."""
    path = claims_file(tmp_path, {"kind": "greater", "a": ref("A"), "b": ref("B")},
                       {"kind": "monotone", "direction": "increasing", "items": [ref("B"), ref("C"), ref("A")]},
                       {"kind": "greater", "a": {"table": "paper_only", "row": "A", "metric": "m"},
                        "b": {"table": "paper_only", "row": "B", "metric": "m"}},
                       {"kind": "within", "a": ref("A"), "b": ref("A2"), "delta": 2},
                       {"kind": "greater", "a": ref("A"), "b": ref("C")})
    claims = load_claims(path)
    for claim, work in zip(claims, ["nugget", "distill", "nugget", "distill", "distill"]):
        claim["work"] = work
    return claims


def test_claims_evaluated_per_work_and_merged_equal_the_claims_evaluated_together(tmp_path, unit_file):
    # The claims rule joins results/claims/<work>.csv: the joined files must be byte for byte what one
    # evaluation of every claim writes (each test is seeded alone, Holm runs within a claim).
    claims = two_works_claims(tmp_path)
    options = dict(scale="demo", skip={"C4": "too costly here"}, not_built={"paper_only": "paper scale"},
                   n_resamples=200, n_permutations=200)
    together = assess_claims(claims, {"t": unit_file}, **options)
    write_claims(together.claims, tmp_path / "all.csv", tmp_path / "all.md", "S")
    together.comparisons.to_csv(tmp_path / "all_comparisons.csv", index=False)
    assert claim_works(claims) == ["nugget", "distill"]
    frames, comparisons = {}, {}
    for work in reversed(claim_works(claims)):  # the order the files are given in does not matter
        results = assess_claims(claims_of_work(claims, work), {"t": unit_file}, **options)
        results.claims.to_csv(tmp_path / work, index=False)
        results.comparisons.to_csv(tmp_path / f"{work}_comparisons", index=False)
        frames[work] = read_claims(tmp_path / work)
        comparisons[work] = read_comparisons(tmp_path / f"{work}_comparisons")
    merged = merge_claims(frames, claims, scale="demo")
    write_claims(merged, tmp_path / "m.csv", tmp_path / "m.md", "S")
    merge_comparisons(comparisons, merged).to_csv(tmp_path / "m_comparisons.csv", index=False)
    assert (tmp_path / "m.csv").read_bytes() == (tmp_path / "all.csv").read_bytes()
    assert (tmp_path / "m.md").read_text() == (tmp_path / "all.md").read_text()
    assert (tmp_path / "m_comparisons.csv").read_bytes() == (tmp_path / "all_comparisons.csv").read_bytes()
    assert read_comparisons(tmp_path / "m_comparisons.csv")["claim"].unique().tolist() == ["C0", "C1", "C3"]
    assert read_claims(tmp_path / "m.csv")["verdict"].tolist() == ["holds", "holds", "not built", "holds",
                                                                   "not built"]


def test_merging_claims_names_a_stale_or_missing_work_file(tmp_path, unit_file):
    claims = two_works_claims(tmp_path)
    frames = {w: evaluate_claims(claims_of_work(claims, w), {"t": unit_file}, scale="demo", skip={"C4": "x"},
                                 not_built={"paper_only": "p"}, n_resamples=50, n_permutations=50)
              for w in claim_works(claims)}
    with pytest.raises(ClaimError, match="no claims given for work 'distill'"):
        merge_claims({"nugget": frames["nugget"]}, claims, scale="demo")
    stale = {**frames, "distill": frames["distill"].iloc[:2]}  # built before claim C4 was added
    with pytest.raises(ClaimError, match=r"results/claims/distill.csv: claims \['C1', 'C3'\], but"):
        merge_claims(stale, claims, scale="demo", where={"distill": "results/claims/distill.csv"})
    with pytest.raises(ClaimError, match="built at scale \\['demo'\\], not 'paper'"):
        merge_claims(frames, claims, scale="paper")
    with pytest.raises(ClaimError, match="work 'subencoder' has no claim"):
        merge_claims({**frames, "subencoder": frames["nugget"]}, claims, scale="demo")
    with pytest.raises(ClaimError, match="no claim has work 'subencoder'"):
        claims_of_work(claims, "subencoder")
    (tmp_path / "bad.csv").write_text("id,verdict\nC0,holds\n")
    with pytest.raises(ClaimError, match="bad.csv: columns"):
        read_claims(tmp_path / "bad.csv")
    with pytest.raises(ClaimError, match="bad.csv: columns"):
        read_comparisons(tmp_path / "bad.csv")


def test_merging_comparisons_names_a_stale_work_file(tmp_path, unit_file):
    claims = two_works_claims(tmp_path)
    options = dict(scale="demo", skip={"C4": "x"}, not_built={"paper_only": "p"}, n_resamples=50, n_permutations=50)
    results = {w: assess_claims(claims_of_work(claims, w), {"t": unit_file}, **options) for w in claim_works(claims)}
    merged = merge_claims({w: r.claims for w, r in results.items()}, claims, scale="demo")
    comparisons = {w: r.comparisons for w, r in results.items()}
    merge_comparisons(comparisons, merged)
    stale = {**comparisons, "distill": comparisons["distill"][comparisons["distill"]["claim"] != "C3"]}
    with pytest.raises(ClaimError, match=r"results/claims/distill_comparisons.csv: sub-tests of claims \['C1'\]"):
        merge_comparisons(stale, merged, where={"distill": "results/claims/distill_comparisons.csv"})
    undecided = {**comparisons, "nugget": comparisons["nugget"].assign(decided=False)}
    with pytest.raises(ClaimError, match=r"claims \['C0'\] have not exactly one deciding sub-test"):
        merge_comparisons(undecided, merged)
    with pytest.raises(ClaimError, match="no comparisons given for work 'distill'"):
        merge_comparisons({"nugget": comparisons["nugget"]}, merged)


def test_check_claims_names_the_missing_row_metric_or_table(tmp_path):
    claims = load_claims(claims_file(tmp_path, {"kind": "greater", "a": ref("A"), "b": ref("Z")},
                                     {"kind": "greater", "a": ref("A"), "b": {"row": "B", "metric": "nope"}}))
    tables = {"t": {"rows": ["A", "B"], "metrics": ["m"]}}
    with pytest.raises(ClaimError, match=r"C0: table 't' has no row 'Z'.*C1: table 't' has no metric 'nope'"):
        check_claims(claims, tables)
    with pytest.raises(ClaimError, match="unknown table 't'"):
        check_claims(claims, {"other": {"rows": [], "metrics": []}})
    with pytest.raises(ClaimError, match="unknown claim id"):
        check_claims(claims, tables, skip={"C9": "x"})
    check_claims(claims, tables, skip={"C0": "x", "C1": "y"})  # skipped claims are not checked for rows
    check_claims(claims, {"t": {"rows": [], "metrics": [], "built": False}})  # nor claims on unbuilt tables


@pytest.mark.parametrize("text, message", [
    ("claims: [{id: X, work: w, claim: c, source: s, rule: {kind: bigger, a: 1, b: 2}}]", "kind in"),
    ("claims: [{id: X, work: w, claim: c, source: s}]", "missing \\['rule'\\]"),
    ("claims: [{id: X, work: w, claim: c, source: s, rule: {kind: within, a: {table: t, row: A, metric: m}, "
     "b: {table: t, row: B, metric: m}}}]", "within needs a number"),
    ("claims: [{id: X, work: w, claim: c, source: s, rule: {kind: greater, a: {row: A}, b: {row: B}}}]",
     "lacks \\['table', 'metric'\\]"),
    ("claims: [{id: X, work: w, claim: c, source: s, rule: {kind: monotone, items: [{table: t, row: A, metric: m}, "
     "{table: t, row: B, metric: m}]}}]", "direction"),
    ("claims:\n  - {id: X, work: w, claim: c, source: s, rule: {kind: peak, items: []}}\n", "at least two"),
    ("claims: {}", "must be a list"),
    ("other: 1", "top-level list"),
    ("claims: [: bad", "not valid YAML"),
])
def test_malformed_claims_are_refused(tmp_path, text, message):
    path = tmp_path / "claims.yaml"
    path.write_text(text)
    with pytest.raises(ClaimError, match=message):
        load_claims(path)


def test_verdict_lines_take_only_the_claims_of_the_given_tables(tmp_path, unit_file):
    path = claims_file(tmp_path, {"kind": "greater", "a": ref("A"), "b": ref("B")},
                       {"kind": "greater", "a": {"table": "u", "row": "A", "metric": "m"},
                        "b": {"table": "u", "row": "B", "metric": "m"}})
    lines = verdict_lines(path, {"t": unit_file}, scale="demo", n_resamples=100, n_permutations=100)
    text = "\n".join(lines)
    assert "| C0 |" in text and "| C1 |" not in text and "**holds**" in text


def test_the_projects_claims_file_is_well_formed():
    from pathlib import Path

    claims = load_claims(Path(__file__).parents[1] / "config" / "claims.yaml")  # every margin has its source
    assert {c["work"] for c in claims} <= {"nugget", "subencoder", "distill"}
    check_claim_origins(claims)
    # the targets this project set itself, which claims.md tallies apart from the papers' claims
    assert {c["id"] for c in claims if c["origin"] == "ours"} == {"N11", "N12", "S1s", "S2o", "D2", "D3", "D4", "D5"}


@pytest.mark.e2e
def test_smoke_claims_of_a_work_at_two_seeds(tmp_path, mirror, copy_of_smoke_all):
    """The multi-seed claims path end to end. The smoke DAG builds its claims from one seed; on a copy of it, with
    two claim seeds (tests/fixtures/smoke_two_claim_seeds.yaml), the distillation's claims train each claimed
    student at seed 14 too, and every built claim is computed over both seeds."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import pandas as pd

    repo = Path(__file__).resolve().parents[1]
    work = copy_of_smoke_all(tmp_path / "wf")
    one_seed = pd.read_csv(work / "results/claims/distill.csv")
    assert (one_seed["n_seeds"] == 1).all() and one_seed["note"].str.contains("one training seed").all()
    snakemake = str(Path(sys.executable).parent / "snakemake")
    result = subprocess.run([snakemake, "--configfile", "config/smoke.yaml",
                             str(repo / "tests/fixtures/smoke_two_claim_seeds.yaml"), "--cores", "2",
                             "results/claims/distill.csv", "--forcerun", "claims_of_work"],
                            cwd=work, env=dict(os.environ, HF_HUB_OFFLINE="1"), capture_output=True, text=True,
                            timeout=1800)
    assert result.returncode == 0, (result.stdout + result.stderr)[-5000:]
    students = {seed: {p.parent.parent.name for p in (work / "models/distill").glob(f"*/seed{seed}/model.safetensors")}
                for seed in (13, 14)}
    assert students[14] and students[14] <= students[13], students
    two_seeds = pd.read_csv(work / "results/claims/distill.csv")
    assert list(two_seeds["id"]) == list(one_seed["id"]) == [f"D{k}" for k in range(1, 6)]
    assert (two_seeds["n_seeds"] == 2).all(), two_seeds[["id", "n_seeds", "note"]]
    assert set(two_seeds["verdict"]) <= {"holds", "contradicted", "inconclusive"}
    assert two_seeds["difference_lo"].notna().any()
