"""The sub-sentence encoder's paths and look-ups (multivec.rules.subencoder)."""

import copy

import pytest

from multivec.rules import subencoder as module
from multivec.rules.subencoder import SEGMENTER_MODEL, SUBENCODER_DATA_DIR, Subencoder, subencoder_model_dir
from rules_configs import scale_config, seed_sets


@pytest.fixture(scope="module")
def demo():
    return scale_config("demo")


@pytest.fixture(scope="module")
def work(demo):
    return Subencoder(demo, seed_sets(demo))


def test_folders_and_report_outputs():
    assert subencoder_model_dir("minilm") == "models/subencoder/minilm_full/seed{seed}"
    assert subencoder_model_dir("minilm", "full", 13) == "models/subencoder/minilm_full/seed13"
    assert module.propsegment_file("propositions.dev.json") == "data/raw/propsegment/v1/propositions.dev.json"
    assert module.table_output("table7", "md") == {"value": "results/subencoder_table7.md",
                                                   "caption": "../workflow/report/subencoder_table7.rst",
                                                   "category": "Sub-sentence encoder"}


def test_tables(work, demo):
    assert work.tables[:len(work.retrieval_tables)] == work.retrieval_tables
    assert "table7" in work.tables and ("table3" in work.tables) == bool(demo["subencoder"]["evaluation"].get("csts"))
    config = copy.deepcopy(demo)
    config["subencoder"]["model"]["reduced_dim"] = None
    config["subencoder"]["evaluation"]["segmenter"] = None
    assert Subencoder(config, work.seeds).retrieval_tables == ["table1", "table4"]


def test_data_inputs_follow_the_segmenter(work, demo):
    assert set(work.subencoder_segments_inputs()) == {"pairs"}  # demo: the oracle segmenter
    assert work.subencoder_pairs_input() == "data/raw/propsegment/v1/document_clusters.test.json"
    config = copy.deepcopy(demo)
    config["subencoder"]["segmenter"]["kind"] = "seq2seq"
    config["subencoder"]["segmenter"]["table7"] = ["seq2seq"]
    config["subencoder"]["data"]["pairs_source"] = "zhou2022"
    other = Subencoder(config, work.seeds)
    assert other.subencoder_segments_inputs() == {"pairs": f"{SUBENCODER_DATA_DIR}/pairs/pairs.jsonl",
                                                  "seed": f"{SUBENCODER_DATA_DIR}/llm_seed/segments.jsonl",
                                                  "segmenter_model": f"{SEGMENTER_MODEL}/model.safetensors"}
    assert other.subencoder_pairs_input() == "data/raw/zhou2022_pairs/pairs.jsonl"
    assert other.subencoder_table7_inputs()["segmenter_model"] == f"{SEGMENTER_MODEL}/model.safetensors"
    splits = demo["subencoder"]["segmenter"]["table7_splits"]
    assert set(work.subencoder_table7_inputs()) == {f"{kind}_{s}" for s in splits
                                                    for kind in ("clusters", "propositions")}


def test_model_settings(work, demo):
    backbone = next(iter(work.backbones))
    model = work.subencoder_model_config(backbone, "full")
    assert model["encoder"] == work.backbones[backbone]["encoder"] and model["head"] == "mlp"
    assert model["output_dim"] == demo["subencoder"]["model"].get("output_dim")
    assert work.subencoder_model_config(backbone, "d64")["output_dim"] == 64
    train = work.subencoder_train_config(backbone, "14")
    assert train["seed"] == 14 and train["lr"] == work.backbones[backbone]["lr"] and "temperature" not in train
    assert set(work.encoders) >= set(work.backbones)


def test_table_inputs_and_registrations(work):
    inputs = work.subencoder_table_inputs()
    assert inputs["claims"] == work.seeds.claims_path
    assert inputs["units_table1"] == "results/units/subencoder_table1.tables.parquet"
    assert all(isinstance(inputs[f"evaluations_{t}"], list) and inputs[f"evaluations_{t}"]
               for t in work.retrieval_tables)
    tables = {t["table"]: t for t in work.stat_tables()}
    assert list(tables) == [f"subencoder_{t}" for t in ("table1", "table4", "table5", "table8", "table7", "table3")]
    assert not tables["subencoder_table3"]["built"] and tables["subencoder_table7"]["built"]
    assert all(t["work"] == "subencoder" and t["rows"] and t["metrics"] for t in tables.values())
    corpora, tasks = work.audit_entries()
    assert list(corpora) == ["subencoder_pairs"] and list(tasks) == ["propsegment_dev"]
    assert work.subencoder_unit_entries("table1", "tables")
