"""SubEncoder training through the project's engine (Chen et al. 2023 §3.2): the loss falls on a tiny
hand-made set in the shared ``train.jsonl`` format, the best dev weights load with one call, an
interrupted run resumes to the same bytes, and malformed rows are refused with the file and line."""

import csv
import json

import pytest
import torch

from multivec.io import MalformedInputError, read_json
from multivec.subencoder.configuration import SubEncoderConfig
from multivec.subencoder.model import SubEncoder
from multivec.subencoder.training import collate, pair_batches, read_sentences, tokenize_rows, train
from multivec.training.engine import TrainConfig, _Interrupted

PAIRS = [
    ("The bridge opened in 1932 and carries eight lanes.", "Eight lanes cross the bridge, opened in 1932.",
     [("opened in 1932", "opened in 1932"), ("carries eight lanes", "Eight lanes cross")]),
    ("Marie Curie won two Nobel prizes and was born in Warsaw.", "Born in Warsaw, Curie won two Nobel prizes.",
     [("won two Nobel prizes", "won two Nobel prizes"), ("born in Warsaw", "Born in Warsaw")]),
    ("The river floods every spring, damaging farms.", "Farms are damaged when the river floods each spring.",
     [("floods every spring", "river floods each spring"), ("damaging farms", "Farms are damaged")]),
    ("The company was founded in Ohio by two brothers.", "Two brothers founded the company in Ohio.",
     [("founded in Ohio", "company in Ohio"), ("by two brothers", "Two brothers founded")]),
]


def row(pair: int, side: int, sentence: str, phrases: list[str], label_base: int) -> dict:
    props = []
    for k, phrase in enumerate(phrases):
        start = sentence.index(phrase)
        props.append({"text": phrase, "char_spans": [[start, start + len(phrase)]], "label": label_base + k})
    return {"id": f"p{pair}-{side}", "sentence": sentence, "pair_id": f"p{pair}", "propositions": props}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("subencoder_data")
    rows = []
    for p, (left, right, aligned) in enumerate(PAIRS):
        rows.append(row(p, 0, left, [a for a, _ in aligned], 10 * p))
        rows.append(row(p, 1, right, [b for _, b in aligned], 10 * p))
    for name, part in (("train", rows[:6]), ("dev", rows[6:])):
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in part))
    return folder


def run(corpus, out, _interrupt_after=None, **changes):
    cfg = TrainConfig(**{**dict(max_steps=8, batch_size=4, lr=1e-3, eval_every=2, checkpoint_every=3, seed=3,
                                device="cpu", threads=1), **changes})
    return train(SubEncoderConfig(encoder="tiny-random-bert", output_dim=8), cfg, corpus / "train.jsonl",
                 corpus / "dev.jsonl", out, temperature=0.1, _interrupt_after=_interrupt_after)


def test_batches_hold_whole_pairs_and_labels_are_per_pair(corpus):
    rows = read_sentences(corpus / "train.jsonl")
    model = SubEncoder.from_backbone(SubEncoderConfig(encoder="tiny-random-bert"))
    data = tokenize_rows(model, rows)
    batches = pair_batches(data.pairs, 4, seed=0, epoch=0)
    assert sorted(i for b in batches for i in b) == list(range(6))
    batch_of = {i: b for b, batch in enumerate(batches) for i in batch}
    assert all(batch_of[2 * p] == batch_of[2 * p + 1] for p in range(3))  # both sentences of a pair together
    assert pair_batches(data.pairs, 4, 0, 1) == pair_batches(data.pairs, 4, 0, 1)
    _, _, prop_masks, prop_sentence, labels = collate(model, data, [0, 1, 2, 3])
    assert labels.tolist() == [0, 1, 0, 1, 2, 3, 2, 3]  # re-numbered by (pair_id, label)
    assert prop_sentence.tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    assert int(prop_masks.sum()) > 0


def test_training_lowers_the_dev_loss_and_saves_a_loadable_model(corpus, tmp_path):
    summary = run(corpus, tmp_path / "model", max_steps=12)
    with open(tmp_path / "model" / "metrics.csv") as handle:
        dev = [float(r["dev_loss"]) for r in csv.DictReader(handle)]
    assert len(dev) == 6 and min(dev) < dev[0]
    assert summary["best_step"] is not None
    model = SubEncoder.load(tmp_path / "model")
    assert model.output_dim == 8
    config = read_json(tmp_path / "model" / "config.json")
    assert config["loss"]["temperature"] == 0.1 and config["derived"]["train_pairs"] == 3


def test_resume_after_interruption_equals_uninterrupted_run(corpus, tmp_path):
    whole, split = tmp_path / "whole", tmp_path / "split"
    run(corpus, whole)
    with pytest.raises(_Interrupted):
        run(corpus, split, _interrupt_after=4)  # last checkpoint at step 3: step 4 is redone
    run(corpus, split)
    assert (whole / "model.safetensors").read_bytes() == (split / "model.safetensors").read_bytes()
    assert (whole / "metrics.csv").read_text().count("\n") == (split / "metrics.csv").read_text().count("\n")
    with pytest.raises(ValueError, match="temperature"):
        train(SubEncoderConfig(encoder="tiny-random-bert", output_dim=8), TrainConfig(), corpus / "train.jsonl",
              None, tmp_path / "x", temperature=0.0)


@pytest.mark.parametrize("bad, message", [
    ({"id": "a", "sentence": "x y", "pair_id": "p"}, "'propositions' missing"),
    ({"id": "a", "sentence": "x y", "pair_id": "p", "propositions": [{"char_spans": [], "label": 0}]},
     "non-empty 'char_spans'"),
    ({"id": "a", "sentence": "x y", "pair_id": "p", "propositions": [{"char_spans": [[0, 9]], "label": 0}]},
     "not inside the sentence"),
])
def test_malformed_rows_name_file_and_line(tmp_path, bad, message):
    path = tmp_path / "train.jsonl"
    path.write_text(json.dumps(bad) + "\n")
    with pytest.raises(MalformedInputError, match=rf"train.jsonl:1: .*{message}"):
        read_sentences(path)


def test_encode_uses_the_trained_head(corpus, tmp_path):
    run(corpus, tmp_path / "m", max_steps=2)
    model = SubEncoder.load(tmp_path / "m")
    _, masks = model.span_masks(["Eight lanes cross the bridge."], [[[[0, 11]]]])
    vector = model.encode(["Eight lanes cross the bridge."], masks)
    assert vector.shape == (1, 8) and torch.isfinite(vector).all()
