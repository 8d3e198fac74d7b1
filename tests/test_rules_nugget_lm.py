"""Table 3's language models (multivec.rules.nugget_lm)."""

import copy

import pytest

from multivec.rules.nugget_lm import LM_DIR, NuggetLM
from multivec.rules.nugget_zoo import NuggetZoo
from rules_configs import scale_config, seed_sets


@pytest.fixture(scope="module")
def demo():
    return scale_config("demo")


def lm_of(config):
    return NuggetLM(config, NuggetZoo(config), seed_sets(config))


def test_rows_histories_and_settings(demo):
    lm = lm_of(demo)
    assert list(lm.rows) == [r["name"] for r in demo["nugget_lm"]["rows"]]
    assert lm.lm_histories() == [0, *demo["nugget_lm"]["histories"]]
    nuggets = next(n for n, r in lm.rows.items() if r["history"] == "nuggets")
    other = next(n for n, r in lm.rows.items() if r["history"] != "nuggets")
    assert lm.lm_settings(nuggets)["memory_positions"] == demo["nugget_lm"]["memory_positions"]
    assert "memory_positions" not in lm.lm_settings(other)
    assert lm.lm_settings(other)["segment_tokens"] == demo["nugget_lm"]["segment_tokens"]


def test_each_row_starts_from_its_ae_model(demo):
    lm = lm_of(demo)
    for name, row in lm.rows.items():
        expected = "tsdae" if row["ratio"] == 0 else f"r{row['ratio']}_l3_learned_fb"
        assert lm.lm_ae_model(name, 14) == f"models/nugget/ae/{expected}/seed14"


def test_stream_inputs_follow_the_sources(demo):
    config = copy.deepcopy(demo)
    config["nugget_lm"].update(train_source="autoencoding", eval_source="wikitext2")
    assert lm_of(config).lm_stream_inputs() == {"train": "data/built/corpora/autoencoding/train.jsonl",
                                                "dev": "data/built/corpora/autoencoding/dev.jsonl",
                                                "test": "data/raw/wikitext2/test.txt"}
    config["nugget_lm"].update(train_source="wikitext103", eval_source="wikitext103")
    inputs = lm_of(config).lm_stream_inputs()
    assert inputs["train"].endswith("wiki.train.raw") and inputs["test"].endswith("wiki.test.raw")


def test_segment_files_and_audit(demo):
    lm = lm_of(demo)
    files = lm.lm_segment_files("tables")
    assert files[0] == (f"results/nugget_lm/{next(iter(lm.rows))}/seed13.segments.jsonl", next(iter(lm.rows)), 13)
    claimed = lm.seeds.claimed_rows("nugget_table3")
    assert {row for _, row, _ in lm.lm_segment_files("claims")} == claimed & set(lm.rows)
    corpora, tasks = lm.audit_entries()
    assert corpora["nugget_lm"]["evaluated_on"] == ["nugget_lm_test"]
    assert tasks == {"nugget_lm_test": {"format": "text_jsonl", "files": [f"{LM_DIR}/test.jsonl"]}}
