"""The sub-sentence encoder's tables with uncertainty: per-query and per-sentence scores that
reproduce the tables' numbers, rows and seeds of the unit files, CI columns, comparisons and Markdown cells;
and the smoke-scale DAG of Tables 1, 5, 7 with seeds in the model paths and training configs."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from multivec.io import write_json
from multivec.statistics import compute_statistic, read_units, write_units
from multivec.subencoder.evaluation.unit_ranking import mean_metrics, per_query_metrics, retrieval_metrics
from multivec.subencoder.evaluation.segmentation_quality import prf_of
from multivec.subencoder.tables.units import (
    RowSource,
    TABLE7_METRICS,
    evaluation_path,
    retrieval_measurements,
    segmentation_measurements,
    table_measurements,
    Layout,
    table_rows,
    unit_entries,
)
from multivec.subencoder.tables.paper_tables import add_statistics, markdown_table, table8

REPO = Path(__file__).resolve().parents[1]


def _vectors(seed=0, n_queries=6, n_candidates=9):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n_queries, 4, generator=g), torch.randn(n_candidates, 4, generator=g)


def test_per_query_values_average_to_the_summary_metrics():
    queries, candidates = _vectors()
    gold = [{1}, {2, 3}, {0}, {4, 5, 6}, {7}, {8, 0}]
    own = [0, None, None, 3, None, None]
    per_query = per_query_metrics(queries, candidates, gold, own)
    assert set(per_query) == {"p@1", "r@5", "r@10", "r@20"} and all(len(v) == 6 for v in per_query.values())
    assert set(per_query["p@1"]) <= {0.0, 100.0}
    assert mean_metrics(per_query) == retrieval_metrics(queries, candidates, gold, own)
    for name, values in per_query.items():  # the statistics layer's `mean` gives the table's number back
        assert compute_statistic("mean", np.asarray(values)) == pytest.approx(mean_metrics(per_query)[name], abs=1e-12)


def _evaluation(p1, r5, units=("q0:d:0", "q1:d:1", "q2:e:0")):
    per_query = {"units": list(units)}
    for level in ("proposition", "sentence", "document"):
        per_query[level] = {"p@1": p1, "r@5": r5, "r@10": r5, "r@20": r5}
    result = {level: mean_metrics(per_query[level]) for level in ("proposition", "sentence", "document")}
    return {**result, "per_query": per_query, "queries": len(units), "candidates": 9, "dim": 8,
            "index": {"vectors_per_sentence": 2.0, "bytes_per_vector_fp32": 32}, "sentence_units": 5,
            "document_units": 3}


def test_measurements_reproduce_each_tables_numbers_and_pair_table8_queries():
    result = _evaluation([100.0, 0.0, 100.0], [100.0, 50.0, 0.0])
    measurements = retrieval_measurements("table1", "SubEncoder (x)", result, seed=13)
    assert [m.metric for m in measurements] == ["P@1", "R@5", "R@10", "R@20"]
    for m in measurements:
        level, name = {"P@1": ("proposition", "p@1"), "R@5": ("proposition", "r@5"),
                       "R@10": ("proposition", "r@10"), "R@20": ("proposition", "r@20")}[m.metric]
        assert m.seed == 13 and m.statistic == "mean"
        assert compute_statistic("mean", m.values) == pytest.approx(result[level][name], abs=1e-12)
    assert [m.metric for m in retrieval_measurements("table4", "r", result, None)] == \
        ["sentence_P@1", "sentence_R@5", "document_P@1", "document_R@5"]
    table8_result = {"gold": result, "predicted": _evaluation([0.0, 0.0, 100.0], [0.0, 50.0, 100.0])}
    gold = retrieval_measurements("table8", "g", table8_result, 13, part="gold")
    predicted = retrieval_measurements("table8", "p", table8_result, 13, part="predicted")
    assert gold[0].units == predicted[0].units  # the same matched queries: a paired comparison
    assert compute_statistic("mean", predicted[0].values) == pytest.approx(100 / 3)
    with pytest.raises(ValueError, match="no per-query scores"):
        retrieval_measurements("table1", "old", {"proposition": {}}, None)
    with pytest.raises(ValueError, match="no per-query scores under protocol 'own_sentence_excluded'"):
        retrieval_measurements("table1", "old", result, None, protocol="own_sentence_excluded")


def test_rows_and_seeds_of_the_unit_files():
    layout = Layout(("minilm",), ("mask_pooling", "full_mask", "token_subset"))
    rows = table_rows("table1", layout)
    assert [r.row for r in rows] == ["minilm (untrained, mask_pooling) [authors]",
                                     "minilm (untrained, full_mask) [authors]",
                                     "minilm (untrained, token_subset) [authors]", "SubEncoder (minilm) [authors]"]
    assert [r.row for r in table_rows("table5", Layout(("minilm",), ("mask_pooling",), 64))] == \
        ["SubEncoder (minilm)", "SubEncoder (minilm, 64-d)"]
    assert [r.row for r in table_rows("table8", Layout(("a",), ()))] == ["SubEncoder (a), gold queries",
                                                                        "SubEncoder (a), predicted queries"]
    entries = unit_entries("table5", Layout(("minilm",), ("mask_pooling",), 64), [13, 14])
    assert [(e["path"], e["seed"]) for e in entries] == [
        ("results/subencoder/retrieval/subencoder_minilm_full/seed13.json", 13),
        ("results/subencoder/retrieval/subencoder_minilm_full/seed14.json", 14),
        ("results/subencoder/retrieval/subencoder_minilm_d64/seed13.json", 13),
        ("results/subencoder/retrieval/subencoder_minilm_d64/seed14.json", 14)]
    base = unit_entries("table4", Layout(("minilm",), ("mask_pooling",)), [13, 14])
    assert [(e["path"], e["seed"]) for e in base if e["row"].startswith("minilm")] == \
        [("results/subencoder/retrieval/base_minilm_mask_pooling.json", None)]  # untrained: once, no seed
    assert evaluation_path(RowSource("r", "predicted", "a", "gold"), 15) == \
        "results/subencoder/predicted/subencoder_a_full/seed15.json"


def test_table7_measurements_reproduce_the_micro_averaged_scores():
    sentences = [{"id": "c:d:0", "predicted": 2, "gold": 3, "matched_0.8": 1, "matched_0.5": 2},
                 {"id": "c:d:1", "predicted": 1, "gold": 4, "matched_0.8": 0, "matched_0.5": 1},
                 {"id": "c:e:0", "predicted": 0, "gold": 2, "matched_0.8": 0, "matched_0.5": 0}]
    measurements = segmentation_measurements([{"system": "s", "kind": "clause", "stand_in": True, "split": "dev",
                                               "sentences": sentences}])
    assert [m.metric for m in measurements] == list(TABLE7_METRICS)
    assert {m.row for m in measurements} == {"clause segmenter, dev"} and all(m.seed is None for m in measurements)
    values = {m.metric: compute_statistic(m.statistic, m.values) for m in measurements}
    for theta in (0.8, 0.5):
        prf = prf_of(sentences, theta)
        assert values[f"p_{theta}"] == pytest.approx(prf.precision, abs=1e-12)
        assert values[f"r_{theta}"] == pytest.approx(prf.recall, abs=1e-12)
        assert values[f"f1_{theta}"] == pytest.approx(prf.f1, abs=1e-12)


def test_table_gets_ci_columns_seed_means_and_the_declared_comparisons(tmp_path):
    rng = np.random.default_rng(0)
    units = [f"q{i}:doc{i // 4}:{i % 4}" for i in range(40)]  # query_unit_id: 4 queries per document (cluster)
    entries = []
    for row, p, seeds in (("base", 0.3, [None]), ("ours", 0.6, [13, 14]), ("ours, 8-d", 0.55, [13, 14])):
        for seed in seeds:
            path = tmp_path / f"{row}_{seed}.json"
            values = list(100.0 * (rng.random(40) < p))
            write_json(path, _evaluation(values, values, units))
            entries.append({"row": row, "path": str(path), "seed": seed})
    write_units(tmp_path / "subencoder_table5.tables.parquet", table_measurements("table5", entries))
    assert {m.row for m in read_units(tmp_path / "subencoder_table5.tables.parquet")} == {"base", "ours", "ours, 8-d"}
    frame = pd.DataFrame({"row": ["ours", "ours, 8-d", "base"], "P@1": [1.0, 2.0, 3.0], "delta_P@1": [0, 1, 2],
                          "R@5": [1.0, 2.0, 3.0]})
    comparisons = [{"row": "ours, 8-d", "against": ["ours"]}, {"row": "ours", "against": "base", "metrics": ["P@1"]}]
    statistics = {"alpha": 0.05, "confidence": 0.95, "bootstrap_resamples": 200, "permutation_resamples": 200}
    table, stats = add_statistics(frame, tmp_path / "subencoder_table5.tables.parquet", ["P@1", "R@5"], statistics, comparisons)
    assert list(table.columns) == ["row", "P@1", "P@1_lo", "P@1_hi", "P@1_sd", "delta_P@1", "R@5", "R@5_lo",
                                   "R@5_hi", "R@5_sd", "n_seeds"]
    assert table["n_seeds"].tolist() == [2, 2, 1]
    assert table["P@1_sd"].isna().tolist() == [False, False, True]  # one evaluation of the untrained row
    assert (table["P@1_lo"] <= table["P@1"]).all() and (table["P@1"] <= table["P@1_hi"]).all()
    assert table["delta_P@1"].tolist() == [0.0, round(table["P@1"][1] - table["P@1"][0], 2),
                                           round(table["P@1"][2] - table["P@1"][0], 2)]
    assert list(zip(stats.tests["row"], stats.tests["against"], stats.tests["metric"])) == \
        [("ours, 8-d", "ours", "P@1"), ("ours, 8-d", "ours", "R@5"), ("ours", "base", "P@1")]
    assert stats.tests["p_holm"].between(0, 1).all()
    lines = markdown_table(table, ["P@1", "R@5"])
    assert lines[0] == "| row | P@1 | delta_P@1 | R@5 | n_seeds |"
    first = table.iloc[0]
    assert lines[2].startswith(f"| ours | {first['P@1']:.2f} [{first['P@1_lo']:.2f}, {first['P@1_hi']:.2f}] "
                               f"±{first['P@1_sd']:.2f} |")
    assert "±" not in lines[4].split("|")[2]  # no seed SD for the untrained row
    with pytest.raises(ValueError, match="no row 'nope'"):
        add_statistics(frame, tmp_path / "subencoder_table5.tables.parquet", ["P@1"], statistics, [{"row": "nope", "against": "ours"}])


def test_table8_has_one_row_per_query_source_with_the_papers_numbers():
    result = _evaluation([100.0, 0.0, 100.0], [100.0, 50.0, 0.0])
    df = table8([{"row": "SubEncoder (gtr), gold queries", "queries": "gold", "segmenter": "llm",
                  "paper_row": "GTR base", "result": result, "all_queries": 10},
                 {"row": "SubEncoder (gtr), predicted queries", "queries": "predicted", "segmenter": "llm",
                  "paper_row": "GTR base", "result": result, "all_queries": 10}])
    assert df["paper_P@1"].tolist() == [40.77, 38.39] and df["paper_R@5"].tolist() == [72.90, 71.47]
    assert df["matched_queries"].tolist() == [3, 3] and df["P@1"].tolist() == [66.67, 66.67]


def test_comparisons_and_claims_name_existing_rows_at_every_scale(tmp_path):
    """Every scale's DAG parses: the comparisons' and the claims' rows exist in the registered tables."""
    env = {**os.environ, "MULTIVEC_DATA_MIRROR": os.environ.get("MULTIVEC_DATA_MIRROR", "/nonexistent")}
    if not Path(env["MULTIVEC_DATA_MIRROR"]).is_dir():
        pytest.skip("MULTIVEC_DATA_MIRROR is not set")
    snakemake = [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "-s", str(REPO / "Snakefile")]
    for name, extra in (("demo", []), ("smoke", ["--configfile", "config/smoke.yaml"]),
                        ("paper", ["--configfile", "config/paper.yaml"])):
        result = subprocess.run([*snakemake, *extra, "--quiet", "rules", "--directory", str(tmp_path / name),
                                 "--", "results/subencoder_table1.csv", "results/subencoder_table7.csv"],
                                cwd=REPO, env=env, capture_output=True, text=True)
        assert result.returncode == 0, (name, result.stderr[-3000:])


@pytest.fixture(scope="module")
def smoke_tables(tmp_path_factory, copy_of_smoke_all, mirror):
    """The smoke DAG of Tables 1, 5, 7 (tables seeds) and Table 5's claim-seed units, in a copy of the built smoke
    DAG (conftest.smoke_all: the tables are built there; the claim seeds' units are built here)."""
    work = copy_of_smoke_all(tmp_path_factory.mktemp("subencoder_stats") / "wf")
    env = {**os.environ, "MULTIVEC_DATA_MIRROR": str(mirror), "HF_HUB_OFFLINE": "1"}
    targets = ["results/subencoder_table1.csv", "results/subencoder_table7.csv",
               "results/units/subencoder_table5.claims.parquet"]
    result = subprocess.run([sys.executable, "-m", "snakemake", "--configfile", "config/smoke.yaml",
                             str(REPO / "tests/fixtures/smoke_two_claim_seeds.yaml"), "--cores", "2", *targets],
                            cwd=work, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-5000:]
    return work


@pytest.mark.e2e
def test_smoke_models_carry_their_seed_in_path_and_training_config(smoke_tables):
    for seed in (13, 14):  # the claim seeds of tests/fixtures/smoke_two_claim_seeds.yaml
        model = smoke_tables / f"models/subencoder/tiny_d8/seed{seed}"
        assert (model / "model.safetensors").exists()
        assert json.loads((model / "config.json").read_text())["train"]["seed"] == seed
        # Table 5's PCA row projects that seed's full model (subencoder.model.reduced_pca)
        pca = json.loads((smoke_tables / f"models/subencoder/tiny_pca8/seed{seed}/config.json").read_text())["pca"]
        assert pca["source_model"] == f"models/subencoder/tiny_full/seed{seed}" and pca["dim"] == 8
    units = read_units(smoke_tables / "results/units/subencoder_table5.claims.parquet")
    assert sorted({(m.row, m.seed) for m in units}) == [
        ("SubEncoder (tiny)", 13), ("SubEncoder (tiny)", 14), ("SubEncoder (tiny), PCA 8-d", 13),
        ("SubEncoder (tiny), PCA 8-d", 14), ("SubEncoder (tiny, 8-d)", 13), ("SubEncoder (tiny, 8-d)", 14)]


@pytest.mark.e2e
def test_smoke_tables_have_cis_tests_and_claims(smoke_tables):
    table1 = pd.read_csv(smoke_tables / "results/subencoder_table1.csv")
    for metric in ("P@1", "R@5", "R@10", "R@20"):
        assert {f"{metric}_lo", f"{metric}_hi", f"{metric}_sd"} <= set(table1.columns)
        assert (table1[f"{metric}_lo"] <= table1[metric] + 1e-9).all()
    per_query = json.loads((smoke_tables / "results/subencoder/retrieval/subencoder_tiny_full/seed13.json").read_text())
    ours = table1.set_index("row").loc["SubEncoder (tiny) [authors]"]
    assert ours["P@1"] == round(per_query["proposition"]["p@1"], 2) and ours["n_seeds"] == 1
    own = table1.set_index("row").loc["SubEncoder (tiny) [own_sentence_excluded]"]
    assert own["P@1"] == round(per_query["protocols"]["own_sentence_excluded"]["p@1"], 2)
    assert own["protocol"] == "own_sentence_excluded" and own["top1_own_sentence_pct"] == 0
    assert table1.set_index("row").loc["word Jaccard (lexical baseline) [authors]", "kind"] == "lexical"
    tests = pd.read_csv(smoke_tables / "results/subencoder_table1_tests.csv")
    a, o = "[authors]", "[own_sentence_excluded]"
    assert list(zip(tests["row"], tests["against"])) == [(f"SubEncoder (tiny) {a}", f"tiny (untrained, mask_pooling) {a}")] * 4 \
        + [(f"SubEncoder (tiny) {a}", f"tiny (untrained, full_mask) {a}")] * 4 \
        + [(f"tiny (untrained, full_mask) {a}", f"tiny (untrained, mask_pooling) {a}"),
           (f"SubEncoder (tiny) {o}", f"tiny (untrained, mask_pooling) {o}")]
    md = (smoke_tables / "results/subencoder_table1.md").read_text()
    assert "Paired comparisons" in md and "## Claims on this table" in md and "not built" in md
    table7 = pd.read_csv(smoke_tables / "results/subencoder_table7.csv")
    ours7 = table7[table7["row"] == "clause segmenter, dev"].iloc[0]
    assert ours7["f1_0.8_lo"] <= ours7["f1_0.8"] <= ours7["f1_0.8_hi"]
    assert (smoke_tables / "results/subencoder_table7_tests.csv").exists()
