"""Table 2's runs, encodings and evaluation files (multivec.rules.nugget_table2)."""

import re

import pytest

from multivec.rules.nugget_table2 import Table2Runs, parse_run
from multivec.rules.nugget_zoo import NuggetZoo
from rules_configs import scale_config, seed_sets


@pytest.fixture(scope="module")
def demo():
    return scale_config("demo")


@pytest.fixture(scope="module")
def table2(demo):
    return Table2Runs(demo, NuggetZoo(demo), seed_sets(demo))


def test_runs(table2):
    assert table2.row_run("nugget_mt_r0.1", 14) == "nugget_mt_r0.1/seed14"
    assert table2.row_run("bm25", 14) == "bm25"
    assert parse_run("nugget_mt_r0.1/seed14") == ("nugget_mt_r0.1", 14)
    assert parse_run("token_pooling_r0.1") == ("token_pooling_r0.1", None)
    runs = table2.table2_runs([13, 14])
    assert runs.count("bm25") == 1 and "tsdae_ae/seed13" in runs and "tsdae_ae/seed14" in runs
    assert len(runs) == 2 * len(table2.zoo.trained_row_names()) + len(table2.rows) - len(table2.zoo.trained_row_names())


def test_patterns_match_exactly_the_runs_and_encoders(table2):
    for run in table2.table2_runs([13, 140]):
        assert re.fullmatch(table2.run_pattern, run), run
    assert not re.fullmatch(table2.run_pattern, "bm25/seed13")
    assert re.fullmatch(table2.encoder_pattern, "base_encoder")
    assert re.fullmatch(table2.encoder_pattern, "nugget_mt_r0.1/seed13")
    assert not re.fullmatch(table2.encoder_pattern, "colbart")
    assert table2.token_pooling_ratios == sorted(table2.token_pooling_ratios) and table2.token_pooling_ratios


def test_encodings_and_inputs(table2):
    assert table2.encodings_dir("nugget_mt_r0.1/seed13", "pi") == "data/encodings/nugget_mt_r0.1/seed13/pi"
    assert table2.encodings_dir("colbart", "rr") == "data/encodings/base_encoder/rr"
    pooled = next(n for n, r in table2.rows.items() if r["kind"] == "token_pooling")
    assert table2.encodings_dir(pooled, "pi") == f"data/encodings/token_pooling/r{table2.rows[pooled]['ratio']}/pi"
    assert "encodings" not in table2.evaluation_inputs("bm25", "pi")
    assert table2.evaluation_inputs("colbart", "pi")["encodings"] == "data/encodings/base_encoder/pi"
    assert set(table2.encoding_inputs("base_encoder", "rr")) == {"docs", "task"}
    trained = table2.encoding_inputs("nugget_mt_r0.1/seed13", "pi")
    assert trained["weights"] == "models/nugget/mt/r0.1_l3_learned_fb/seed13/model.safetensors"
    assert trained["frozen_bottom"] == "data/frozen_bottom/pi"
    assert "frozen_bottom" not in table2.encoding_inputs("tsdae_mt/seed13", "pi")


def test_evaluation_and_ranking_files(table2):
    files = table2.table2_evaluations([13], suffix="rankings.jsonl")
    assert files[:2] == [f"results/table2/{table2.table2_runs([13])[0]}/{t}.rankings.jsonl" for t in ("pi", "rr")]
    assert len(files) == 2 * len(table2.table2_runs([13]))
    tables = table2.table2_ranking_files("tables")
    assert {row for _, row, _, _ in tables} == set(table2.rows)
    claims = table2.table2_ranking_files("claims")
    claimed = table2.seeds.claimed_rows("table2")
    assert {row for _, row, _, _ in claims} == claimed & set(table2.rows)
    assert {seed for _, row, seed, _ in claims if table2.is_trained(row)} == {13, 14, 15}


def test_memory_use_models(table2):
    models = table2.memory_use_models()
    assert list(models)[-2:] == ["ae_base_r1", "mt_base_r1"]
    assert models["nugget_mt_r0.1"] == {"objective": "mt", "folder": "models/nugget/mt/r0.1_l3_learned_fb/seed13"}
