"""NUGGET training loop at smoke scale: loss goes down, outputs on disk, exact resumption, encodings."""

import csv
import random

import numpy as np
import pytest

from multivec.encodings import read_encodings
from multivec.io import read_json, write_jsonl
from multivec.nugget.configuration import NuggetConfig
from multivec.nugget.encoding import encode_documents, write_nugget_encodings
from multivec.nugget.generation import generate_texts
from multivec.nugget.modeling import NuggetModel
from multivec.nugget.training import TrainConfig, train
from multivec.training.engine import TrainingTimeLimitError, _Interrupted

WORDS = "the cat dog sat ran on a mat house red blue small big quickly slowly and but near far tree".split()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    rng = random.Random(0)
    rows = []
    for i in range(72):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 18))) + "."
        rows.append({"id": f"d{i}", "source": text, "target": text})
    write_jsonl(folder / "train.jsonl", rows[:60])
    write_jsonl(folder / "dev.jsonl", rows[60:])
    return folder


def smoke_config(**changes):
    base = dict(encoder="tiny-random-bert", ratio=0.3, scorer_layer=2, decoder_heads=2, decoder_ffn=64,
                target_vocab_size=300, max_source_tokens=32, max_target_tokens=32)
    return NuggetConfig(**{**base, **changes})


def run(corpus, out, model_config, _interrupt_after=None, **train_changes):
    train_config = TrainConfig(**{**dict(max_steps=12, batch_size=8, lr=1e-3, lr_scratch=3e-3, warmup_steps=2,
                                         eval_every=4, checkpoint_every=3, threads=1, device="cpu"), **train_changes})
    return train(model_config, train_config, corpus / "train.jsonl", corpus / "dev.jsonl", out,
                 _interrupt_after=_interrupt_after)


def metrics(out):
    with open(out / "metrics.csv") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def trained(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("trained")
    summary = run(corpus, out, smoke_config(noise_deletion=0.1), max_steps=30, eval_every=10, checkpoint_every=10)
    return out, summary


def test_training_lowers_loss_and_writes_outputs(trained):
    out, summary = trained
    rows = metrics(out)
    assert [int(r["step"]) for r in rows] == [10, 20, 30]
    assert float(rows[-1]["dev_loss"]) < float(rows[0]["dev_loss"]) - 0.3
    assert float(rows[-1]["train_loss"]) < float(rows[0]["train_loss"])
    assert summary["train_steps"] == 30 and summary["stopped_by"] == "max_steps"
    assert summary["best_dev_loss"] == pytest.approx(min(float(r["dev_loss"]) for r in rows), abs=1e-5)
    assert read_json(out / "training_summary.json") == summary
    config = read_json(out / "config.json")
    assert config["model"]["noise_deletion"] == 0.1 and config["train"]["max_steps"] == 30
    assert config["derived"]["frozen_layers"] == 2
    assert (out / "checkpoint" / "latest.json").exists()
    assert (out / "target_tokenizer" / "tokenizer.json").exists()


def test_trained_model_loads_encodes_and_generates(trained, tmp_path):
    out, _ = trained
    model = NuggetModel.from_pretrained(out)
    texts = ["the red cat sat near a small tree.", "a dog ran."]
    documents = encode_documents(model, texts, batch_size=1)
    ids, mask = model.processor.collate_sources(model.processor.tokenize_sources(texts), model.device)
    for doc, n in zip(documents, mask.sum(1).tolist()):
        assert doc.vectors.shape == (int(np.ceil(n * 0.3 - 1e-9)), model.encoder.hidden_size)
        assert len(doc.nugget_tokens) == len(doc.scores) == len(doc.vectors)
    write_nugget_encodings(tmp_path / "enc", ["a", "b"], texts, model, batch_size=2, info={"task": "smoke"})
    encodings = read_encodings(tmp_path / "enc")
    assert encodings.ids == ["a", "b"] and encodings.info["task"] == "smoke"
    assert encodings.documents[0]["nugget_tokens"] == documents[0].nugget_tokens
    np.testing.assert_allclose(encodings.vectors[1], documents[1].vectors, atol=1e-2)  # float16 on disk
    outputs = generate_texts(model, texts, num_beams=2, max_new_tokens=6)
    assert len(outputs) == 2 and all(isinstance(o, str) for o in outputs)


def test_resume_after_interruption_equals_uninterrupted_run(corpus, tmp_path):
    config = smoke_config(noise_deletion=0.2)
    whole, split = tmp_path / "whole", tmp_path / "split"
    run(corpus, whole, config)
    with pytest.raises(_Interrupted):
        run(corpus, split, config, _interrupt_after=7)  # last checkpoint at step 6: step 7 is redone
    assert read_json(split / "checkpoint" / "latest.json")["folder"] == "step_00000006"
    run(corpus, split, config)
    assert (whole / "model.safetensors").read_bytes() == (split / "model.safetensors").read_bytes()
    whole_checkpoint = whole / "checkpoint" / "step_00000012" / "model.safetensors"
    assert whole_checkpoint.read_bytes() == (split / "checkpoint" / "step_00000012" / "model.safetensors").read_bytes()
    keep = ("step", "train_loss", "dev_loss")
    assert [[r[k] for k in keep] for r in metrics(whole)] == [[r[k] for k in keep] for r in metrics(split)]
    summary = read_json(split / "training_summary.json")
    assert summary["best_step"] == read_json(whole / "training_summary.json")["best_step"]
    # Calling again on a finished run trains nothing and keeps the result.
    before = (split / "model.safetensors").read_bytes()
    assert run(corpus, split, config)["train_steps"] == 12
    assert (split / "model.safetensors").read_bytes() == before


def test_resume_refuses_a_different_configuration(corpus, tmp_path):
    with pytest.raises(_Interrupted):
        run(corpus, tmp_path, smoke_config(), _interrupt_after=3)
    with pytest.raises(ValueError, match="model.ratio"):
        run(corpus, tmp_path, smoke_config(ratio=0.5))


def test_time_cap_fails_loudly_without_a_model(corpus, tmp_path):
    with pytest.raises(TrainingTimeLimitError, match="raise train.max_minutes"):
        run(corpus, tmp_path, smoke_config(), max_minutes=1e-6)
    assert not (tmp_path / "model.safetensors").exists() and not (tmp_path / "training_summary.json").exists()
    assert read_json(tmp_path / "checkpoint" / "latest.json")["folder"] == "step_00000001"


@pytest.mark.parametrize("changes", [
    dict(architecture="mbart", encoder="tiny-random-mbart", target_tokenizer="source"),
    dict(selector="chunking", residual=False),
    dict(bottleneck="mean", residual=False, feedback=False, noise_deletion=0.6),
])
def test_other_variants_train(corpus, tmp_path, changes):
    summary = run(corpus, tmp_path, smoke_config(**changes), max_steps=4, eval_every=4, checkpoint_every=4)
    assert summary["train_steps"] == 4 and np.isfinite(summary["best_dev_loss"])
    model = NuggetModel.from_pretrained(tmp_path)
    documents = encode_documents(model, ["the cat sat on the mat, near a tree.", "a dog."])
    if changes.get("bottleneck") == "mean":
        assert all(d.vectors.shape[0] == 1 and d.nugget_indices is None for d in documents)
    else:
        assert all(d.scores is None for d in documents) == (changes.get("selector") == "chunking")


KILLED_RUN = """
import sys, torch
torch.set_num_threads(1)
from multivec.nugget.configuration import NuggetConfig
from multivec.nugget.training import TrainConfig, train
corpus, out = sys.argv[1], sys.argv[2]
train(NuggetConfig(**{config!r}), TrainConfig(**{train!r}), corpus + "/train.jsonl", corpus + "/dev.jsonl", out)
"""


def test_resume_after_kill_9_equals_uninterrupted_run(corpus, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    config = smoke_config(noise_deletion=0.2)
    train_changes = dict(max_steps=80, batch_size=8, lr=1e-3, lr_scratch=3e-3, warmup_steps=2, eval_every=8,
                         checkpoint_every=2, threads=1, device="cpu")
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    script = KILLED_RUN.format(config=config.to_dict(), train=train_changes)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    process = subprocess.Popen([sys.executable, "-c", script, str(corpus), str(killed)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pointer = killed / "checkpoint" / "latest.json"
    deadline = time.time() + 120
    while time.time() < deadline and process.poll() is None:
        if pointer.exists() and read_json(pointer)["folder"] >= "step_00000010":
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.02)
    assert process.wait() == -signal.SIGKILL, "the run ended before it could be killed"
    assert not (killed / "training_summary.json").exists()
    # Snakemake deletes a killed job's declared outputs before it reruns the job.
    for output in ("model.safetensors", "config.json", "metrics.csv"):
        (killed / output).unlink(missing_ok=True)
    run(corpus, killed, config, **train_changes)
    run(corpus, whole, config, **train_changes)
    assert (whole / "model.safetensors").read_bytes() == (killed / "model.safetensors").read_bytes()
    keep = ("step", "train_loss", "dev_loss")
    assert [[r[k] for k in keep] for r in metrics(whole)] == [[r[k] for k in keep] for r in metrics(killed)]


def test_sentence_boundary_selector_trains_on_corpus_sentence_ends(tmp_path):
    """Table 4's sentence-boundary selector reads the corpus rows' real sentence ends: nuggets are the
    sentence-final tokens ("Dr." inside a sentence is not one), and rows without ends are refused."""
    from multivec.nugget.training import make_batch, tokenize_pairs

    texts = ["Dr. Smith sat on a mat. The cat ran.", "A dog sat near a tree. Dr. Red ran far. The end."]
    rows = [{"id": f"s{i}", "source": t, "target": t,
             "source_sentence_ends": [i + 1 for i, c in enumerate(t) if c == "." and t[max(0, i - 2):i] != "Dr"]}
            for i, t in enumerate(texts)]
    write_jsonl(tmp_path / "train.jsonl", rows * 4)
    write_jsonl(tmp_path / "dev.jsonl", rows)
    config = smoke_config(selector="sentence_boundary", residual=False, ratio=0.1)
    summary = train(config, TrainConfig(max_steps=2, batch_size=4, eval_every=2, checkpoint_every=2, threads=1,
                                        device="cpu"), tmp_path / "train.jsonl", tmp_path / "dev.jsonl",
                    tmp_path / "out")
    assert summary["train_steps"] == 2

    from multivec.nugget.target_tokenizer import TargetTokenizer

    model = NuggetModel.from_backbone(config, TargetTokenizer.load(tmp_path / "out" / "target_tokenizer"))
    data = tokenize_pairs(model, rows)
    assert [sum(m) for m in data.sentence_ends] == [2, 3]  # "Dr." never counts
    batch = make_batch(model, data, [0, 1], None)
    assert len(batch) == 5
    nuggets = model.encode(batch[0], batch[1], batch[4])
    assert nuggets.mask.sum(1).tolist() == [2, 3]

    with pytest.raises(ValueError, match="source_sentence_ends"):
        tokenize_pairs(model, [{k: v for k, v in rows[0].items() if k != "source_sentence_ends"}])
