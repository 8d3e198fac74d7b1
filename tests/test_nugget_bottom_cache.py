"""The frozen-bottom cache of NUGGET training (§3.3): same losses as recomputing the bottom every step."""

import csv
import random

import pytest
import torch

from multivec.io import write_jsonl
from multivec.nugget.configuration import NuggetConfig
from multivec.nugget.modeling import NuggetModel
from multivec.nugget.training import (BottomCache, NuggetTask, bottom_cache_applies, dev_loss, make_batch,
                                      read_pairs, tokenize_pairs)
from multivec.training.engine import TrainConfig, seeded_generator, train_task

WORDS = "the cat dog sat ran on a mat house red blue small big quickly slowly and but near far tree".split()


def config(**changes):
    base = dict(encoder="tiny-random-bert", ratio=0.3, scorer_layer=2, decoder_heads=2, decoder_ffn=64,
                target_tokenizer="source", max_source_tokens=32, max_target_tokens=32)
    return NuggetConfig(**{**base, **changes})


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    rng = random.Random(1)
    rows = []
    for i in range(40):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 20))) + "."
        rows.append({"id": f"d{i}", "source": text, "target": text})
    write_jsonl(folder / "train.jsonl", rows[:32])
    write_jsonl(folder / "dev.jsonl", rows[32:])
    return folder


def test_cache_applies_only_without_noise_and_with_a_frozen_bottom():
    assert bottom_cache_applies(config())
    assert not bottom_cache_applies(config(noise_deletion=0.2))
    assert not bottom_cache_applies(config(frozen_layers=1))  # layer 2 trains: its output changes
    assert not bottom_cache_applies(config(bottleneck="mean", residual=False, feedback=False, frozen_layers=-1))


def test_cached_steps_give_the_same_losses_and_gradients(corpus):
    rows = read_pairs(corpus / "train.jsonl")
    models = [NuggetModel.from_backbone(config(decoder_dropout=0.0)) for _ in range(2)]
    data = tokenize_pairs(models[0], rows)
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.1) for m in models]
    cache = BottomCache()
    rng = random.Random(0)
    for step in range(10):  # 32 documents, batches of 8: every document is seen more than once
        spec = rng.sample(range(len(rows)), 8)
        losses = []
        for model, optimizer, use in zip(models, optimizers, (cache, None)):
            model.train()
            batch = make_batch(model, data, spec, None, use)
            loss = model(*batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.detach().item())
        assert losses[0] == pytest.approx(losses[1], abs=1e-5), f"step {step}"
    assert cache.hits > 0 and cache.misses == len(cache.states) <= len(rows)
    assert cache.megabytes() > 0
    # Batches that mix cached and new documents compute the new ones at another width: float rounding only.
    drift = max(float((a - b).detach().abs().max()) for a, b in zip(models[0].parameters(), models[1].parameters()))
    assert drift < 1e-4, drift
    dev = tokenize_pairs(models[0], read_pairs(corpus / "dev.jsonl"))
    no_autocast = lambda: torch.autocast("cpu", enabled=False)  # noqa: E731
    assert dev_loss(models[0], dev, 4, 0, no_autocast, BottomCache()) == pytest.approx(
        dev_loss(models[1], dev, 4, 0, no_autocast), abs=1e-5)


def test_cache_refuses_noisy_batches(corpus):
    model = NuggetModel.from_backbone(config(noise_deletion=0.3))
    data = tokenize_pairs(model, read_pairs(corpus / "train.jsonl"))
    with pytest.raises(ValueError, match="deletion noise"):
        make_batch(model, data, [0, 1], seeded_generator(0, "step", 0), BottomCache())


def test_cache_bound_stores_nothing_past_it(corpus):
    model = NuggetModel.from_backbone(config()).train()  # the frozen bottom runs in eval mode
    data = tokenize_pairs(model, read_pairs(corpus / "train.jsonl"))
    cache = BottomCache(max_megabytes=0.0)
    first = make_batch(model, data, [0, 1, 2], None, cache)[-1]
    again = make_batch(model, data, [0, 1, 2], None, cache)[-1]
    assert not cache.states and torch.equal(first, again)


def test_engine_runs_give_the_same_dev_losses_with_and_without_cache(corpus, tmp_path):
    train_config = TrainConfig(max_steps=10, batch_size=8, lr=1e-3, lr_scratch=3e-3, warmup_steps=2, eval_every=5,
                               checkpoint_every=5, threads=1, device="cpu")
    rows, dev_rows = read_pairs(corpus / "train.jsonl"), read_pairs(corpus / "dev.jsonl")
    results = []
    for cache_bottom in (True, False):
        task = NuggetTask(config(), train_config, rows, dev_rows, cache_bottom=cache_bottom)
        assert (task.train_cache is not None) == cache_bottom
        out = tmp_path / str(cache_bottom)
        train_task(task, train_config, out)
        if cache_bottom:
            assert task.train_cache.hits > 0  # 10 steps over 4 batches per epoch: the cache is read
        with open(out / "metrics.csv") as handle:
            results.append([float(r["dev_loss"]) for r in csv.DictReader(handle) if r.get("dev_loss")])
    assert len(results[0]) == 2
    assert results[0] == pytest.approx(results[1], abs=1e-4)
