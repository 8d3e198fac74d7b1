"""Sanity gates of trained NUGGET models (multivec.nugget.gates), at smoke scale: a model whose best
dev loss is not below the unigram entropy of its targets, or a shared r = 1 model that cannot reconstruct, is
named in the table and the log (or stops the build with ``strict``), never used silently."""

import json
import logging

import pytest

from multivec.nugget.tables.table2 import TABLE2_COLUMNS, assemble_table2, table2_markdown, with_gates
from multivec.nugget.configuration import NuggetConfig
from multivec.nugget.gates import GateError, base_gate, checked_models, dev_loss_gate, gate_notes
from multivec.nugget.training import TrainConfig, train

TEXTS = ["the cat sat on the mat.", "a small dog ran near the red house.", "birds sing in the tall green trees."]


def fake_model(folder, best, unigram):
    folder.mkdir(parents=True)
    (folder / "training_summary.json").write_text(json.dumps({"best_dev_loss": best, "train_steps": 3}))
    (folder / "config.json").write_text(json.dumps({"model": {}, "derived": {"unigram_nats": unigram}}))
    return folder


def test_dev_loss_gate_passes_only_below_the_unigram_entropy(tmp_path, caplog):
    good, bad = fake_model(tmp_path / "good", 4.0, 6.5), fake_model(tmp_path / "bad", 7.0, 6.5)
    assert dev_loss_gate(good)["gate"] == "ok" and dev_loss_gate(good)["below_unigram"]
    failed = dev_loss_gate(bad)
    assert not failed["below_unigram"] and failed["gate"] == "FAILED: best dev loss 7.000 >= unigram 6.500 nats/token"
    with caplog.at_level(logging.WARNING):
        gates = checked_models({"nugget_mt_r0.1": good, "tsdae_mt": bad})
    assert "tsdae_mt" in caplog.text and str(bad) in caplog.text and "nugget_mt_r0.1" not in caplog.text
    note = " ".join(gate_notes(gates))
    assert "Sanity gate missed" in note and "`tsdae_mt`" in note and "nugget_mt_r0.1" not in note
    # the table names the failed row in its gate column
    records = [with_gates({"row": name, "model": "TSDAE"}, gate) for name, gate in gates.items()]
    markdown = table2_markdown(assemble_table2(records), "Scale: smoke.")
    assert "FAILED: best dev loss 7.000" in markdown and list(assemble_table2(records).columns) == TABLE2_COLUMNS


def test_a_model_without_the_unigram_reference_is_refused_naming_its_file(tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / "training_summary.json").write_text(json.dumps({"best_dev_loss": 3.0}))
    (folder / "config.json").write_text(json.dumps({"model": {}, "derived": {}}))
    with pytest.raises(ValueError, match="config.json: no derived.unigram_nats"):
        dev_loss_gate(folder)


@pytest.fixture(scope="module")
def base_model(tmp_path_factory):
    """A shared r = 1 model of tiny-random-bert trained 2 steps: it cannot reconstruct anything."""
    root = tmp_path_factory.mktemp("base")
    rows = root / "rows.jsonl"
    rows.write_text("".join(json.dumps({"id": str(i), "source": t, "target": t}) + "\n" for i, t in enumerate(TEXTS)))
    config = NuggetConfig(encoder="tiny-random-bert", scorer_layer=1, bottleneck="tokens", ratio=1.0, residual=False,
                          feedback=False, decoder_init="encoder", target_tokenizer="source", decoder_copy_layers=[0, 1],
                          max_source_tokens=32, max_target_tokens=32, output_bias_init="unigram")
    train(config, TrainConfig(max_steps=2, batch_size=3, eval_every=2, checkpoint_every=2), rows, rows, root / "m")
    return root / "m", rows


def test_base_gate_names_a_base_that_cannot_reconstruct_and_strict_stops(base_model):
    folder, rows = base_model
    settings = dict(min_bleu=0.9, documents=3, num_beams=1, batch_size=3)
    gate = base_gate(folder, rows, "ae", **settings)
    assert gate["bleu"] < 0.9 and not gate["passes"] and gate["gate"].startswith("FAILED: BLEU")
    assert "FAILED" in gate["message"] and str(folder) in gate["message"]
    assert "Shared r = 1 starting model FAILED" in " ".join(gate_notes({}, [gate]))
    with pytest.raises(GateError, match="strict is true"):
        base_gate(folder, rows, "ae", strict=True, **settings)
    # a reachable bar passes BLEU; the dev-loss part of the gate still decides on its own numbers
    lenient = base_gate(folder, rows, "ae", **{**settings, "min_bleu": 0.0})
    assert lenient["passes"] == (lenient["best_dev_loss"] < lenient["unigram_nats"])
