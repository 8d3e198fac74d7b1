"""Table 4's rows as zoo models (multivec.rules.nugget_ablation)."""

import copy

import pytest

from multivec.config.cross_checks import table4_zoo_problems
from multivec.rules.nugget_ablation import ABLATION_POOLING, NuggetAblation
from multivec.rules.nugget_table2 import Table2Runs
from multivec.rules.nugget_zoo import SENTENCE_SHARE, NuggetZoo
from rules_configs import scale_config, seed_sets


def ablation_of(config):
    zoo, seeds = NuggetZoo(config), seed_sets(config)
    return NuggetAblation(config, zoo, Table2Runs(config, zoo, seeds), seeds)


@pytest.fixture(scope="module")
def demo():
    return scale_config("demo")


@pytest.fixture(scope="module")
def ablation(demo):
    return ablation_of(demo)


def test_rows_are_zoo_models(ablation):
    assert ablation.ablation_variant("nugget_l3") == ablation.zoo.long_variant("0.1") == "r0.1_l3_learned_fb"
    assert ablation.ablation_model_dir("nugget_l3", 13) == ablation.zoo.long_model_dir("mt", "0.1", 13)
    assert ablation.ablation_variant("no_feedback") == "r0.1_l3_learned_nofb"
    assert ablation.ablation_variant("nugget_r_sb").startswith("rsb_")
    assert ablation.ablation_uses_sentence_share("nugget_r_sb") and not ablation.ablation_uses_sentence_share("random")
    assert ablation.ablation_model_files("chunking", 14)["weights"] == \
        "models/nugget/mt/r0.1_l3_chunking_fb/seed14/model.safetensors"
    assert ablation.zoo.zoo_train_inputs("mt", ablation.ablation_variant("nugget_r_sb"))["sentence_share"] == \
        SENTENCE_SHARE
    assert table4_zoo_problems(ablation.config) == []


def test_paper_layers_map_to_ours(ablation, demo):
    assert ablation.layers == {int(k): v for k, v in demo["nugget_ablation"]["layers"].items()}
    assert ablation.ablation_model_config("nugget_l9")["scorer_layer"] == ablation.layers[9]


def test_encoding_inputs_read_the_shared_bottom_only_at_table2s_layer(ablation):
    shared = ablation.ablation_encoding_inputs("nugget_l3", 13, "pi")
    assert shared["frozen_bottom"] == "data/frozen_bottom/pi" and shared["docs"] == "data/built/tasks/pi/docs.txt"
    assert "frozen_bottom" not in ablation.ablation_encoding_inputs("nugget_l0", 13, "pi")


def test_token_pooling_row_reads_table2s_run(ablation):
    assert ablation.table4_rows == ablation.rows + [ABLATION_POOLING]
    assert ablation.pooling_run == "token_pooling_r0.1"
    assert ablation.ablation_pooling_evaluations() == ["results/table2/token_pooling_r0.1/pi.json",
                                                       "results/table2/token_pooling_r0.1/rr.json"]
    assert ablation.ablation_pooling_params() == {"row": "token_pooling", "run": "token_pooling_r0.1", "ratio": 0.1}


def test_without_a_table2_pooling_row_at_r_there_is_none(demo):
    config = copy.deepcopy(demo)
    config["table2"]["rows"] = [r for r in config["table2"]["rows"] if r["kind"] != "token_pooling"]
    ablation = ablation_of(config)
    assert ablation.pooling_run is None and ablation.table4_rows == ablation.rows
    assert ablation.ablation_pooling_evaluations() == [] and ablation.ablation_pooling_params() is None


def test_evaluation_and_ranking_files(ablation):
    files = ablation.ablation_evaluations([13, 14], suffix="rankings.jsonl")
    assert files[:3] == ["results/nugget_table4/nugget_l3/seed13/pi.rankings.jsonl",
                         "results/nugget_table4/nugget_l3/seed13/rr.rankings.jsonl",
                         "results/nugget_table4/nugget_l3/seed14/pi.rankings.jsonl"]
    assert len(files) == len(ablation.rows) * 2 * 2
    tables = ablation.ablation_ranking_files("tables")
    assert tables[-2:] == [("results/table2/token_pooling_r0.1/pi.rankings.jsonl", ABLATION_POOLING, None, "pi"),
                           ("results/table2/token_pooling_r0.1/rr.rankings.jsonl", ABLATION_POOLING, None, "rr")]
    claimed = ablation.seeds.claimed_rows("nugget_table4")
    assert {row for _, row, _, _ in ablation.ablation_ranking_files("claims")} == claimed & set(ablation.table4_rows)
    assert ablation.pattern.split("|") == [r.replace(".", "\\.") for r in ablation.rows]
