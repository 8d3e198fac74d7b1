"""Does the decoder read the nuggets? (multivec.nugget.analysis.memory_use): the memory gain and the
loss by distance to the nearest nugget, on tiny random models."""

import numpy as np
import pytest
import torch

from multivec.nugget.analysis.memory_use import (BIN_COLUMNS, DISTANCE_BINS, aligned_targets, distance_bins,
                                                 document_losses, memory_use_markdown, memory_use_row)
from multivec.nugget.configuration import NuggetConfig
from multivec.nugget.modeling import NuggetModel
from multivec.nugget.target_tokenizer import TargetTokenizer
from multivec.nugget.training import TokenizedPairs, dev_loss
from multivec.statistics.resampling import BootstrapSettings

TEXTS = ["the cat sat on the mat and looked at the bird outside.", "a small dog ran near the red house.",
         "rain fell over the quiet town all night long.", "she wrote a letter to her brother in paris."]
SETTINGS = BootstrapSettings(n_resamples=200)


def ae_model(**changes):
    base = dict(encoder="tiny-random-bert", ratio=0.3, scorer_layer=2, decoder_layers=2, decoder_init="encoder",
                target_tokenizer="source", decoder_copy_layers=[1, 3], max_source_tokens=32, max_target_tokens=32,
                decoder_memory_positions=True)
    torch.manual_seed(0)
    return NuggetModel.from_backbone(NuggetConfig(**{**base, **changes})).eval()


def pairs(model, texts=TEXTS):
    processor = model.processor
    return TokenizedPairs(processor.tokenize_sources(texts, 32), processor.target_tokenizer.encode(texts, 32))


def test_distance_bins_cap_at_three_and_mark_nuggets_zero():
    assert distance_bins(9, [2, 3]).tolist() == [2, 1, 0, 0, 1, 2, 3, 3, 3]
    assert distance_bins(3, [0, 1, 2]).tolist() == [0, 0, 0]
    with pytest.raises(ValueError, match="no nugget positions"):
        distance_bins(3, [])


def test_own_memory_loss_is_the_training_dev_loss_and_bins_partition_it():
    model = ae_model()
    data = pairs(model)
    losses = document_losses(model, data, batch_size=3)
    no_autocast = lambda: torch.autocast("cpu", enabled=False)  # noqa: E731
    assert losses.own.sum() / losses.tokens.sum() == pytest.approx(dev_loss(model, data, 2, 0, no_autocast), rel=1e-5)
    assert np.array_equal(losses.distance_tokens.sum(axis=1), losses.tokens)
    assert np.allclose(losses.by_distance.sum(axis=1), losses.own, rtol=1e-6)
    # about r = 0.3 of the tokens are nuggets (k counts [CLS]/[SEP], labels skip [CLS])
    share = losses.distance_tokens[:, 0].sum() / losses.tokens.sum()
    assert 0.15 < share < 0.45
    assert not np.allclose(losses.other, losses.own)  # a random decoder does read its memory


def test_a_decoder_that_ignores_its_memory_has_zero_gain():
    model = ae_model()
    with torch.no_grad():  # cross-attention adds nothing: the decoder is a language model of the targets
        for layer in model.decoder.decoder.encoder.layer:
            layer.crossattention.output.dense.weight.zero_()
            layer.crossattention.output.dense.bias.zero_()
    losses = document_losses(model, pairs(model), batch_size=4)
    row = memory_use_row(losses, SETTINGS)
    assert row["memory_gain"] == pytest.approx(0.0, abs=1e-6)
    assert row["memory_gain_lo"] == pytest.approx(0.0, abs=1e-6) and row["memory_gain_hi"] == pytest.approx(0.0, abs=1e-6)


def test_the_r1_model_has_every_token_at_distance_zero():
    model = ae_model(bottleneck="tokens", ratio=1.0, residual=False, feedback=False)
    losses = document_losses(model, pairs(model), batch_size=2)
    assert np.array_equal(losses.distance_tokens[:, 0], losses.tokens)
    assert losses.distance_tokens[:, 1:].sum() == 0
    row = memory_use_row(losses, SETTINGS)
    assert row["share_d0"] == 1.0 and np.isnan(row["nats_d1"])


@pytest.mark.parametrize("changes, reason", [
    (dict(bottleneck="mean", ratio=1.0, residual=False, feedback=False), "one vector per document"),
    (dict(objective="mt", target_tokenizer="bpe", decoder_init="scratch", decoder_copy_layers=None,
          decoder_memory_positions=False), "targets are not the source tokens"),
])
def test_no_distance_bins_without_positions_or_aligned_targets(changes, reason):
    if changes.get("target_tokenizer") == "bpe":
        model = NuggetModel.from_backbone(NuggetConfig(**{**dict(
            encoder="tiny-random-bert", ratio=0.3, scorer_layer=2, decoder_layers=1, decoder_heads=4, max_source_tokens=32,
            max_target_tokens=32), **changes}), TargetTokenizer.train_bpe(TEXTS * 5, 300)).eval()
    else:
        model = ae_model(**changes)
    losses = document_losses(model, pairs(model), batch_size=4)
    assert losses.by_distance is None and reason in losses.no_bins_reason
    row = memory_use_row(losses, SETTINGS)
    assert reason in row["distance_bins"] and "nats_d0" not in row
    lines = memory_use_markdown([{"model": "m", "folder": "f", "unigram_nats": 5.0, **row}], 0.95)
    assert lines[-1].startswith("No distance bins: ") and reason in lines[-1]
    assert lines[-3].count("| – ") == len(DISTANCE_BINS)


def test_truncated_targets_are_not_binned():
    model = ae_model()
    data = pairs(model)
    data.targets[1] = data.targets[1][:-2] + data.targets[1][-1:]
    assert aligned_targets(model, data).startswith("1 of 4 documents")


def test_row_cis_bracket_the_estimates_and_markdown_shows_every_bin():
    model = ae_model()
    row = memory_use_row(document_losses(model, pairs(model), batch_size=4), SETTINGS)
    for name in ["nats_own", "nats_other_document", "memory_gain"] + [f"nats_{b}" for b in BIN_COLUMNS[:2]]:
        assert row[f"{name}_lo"] <= row[name] <= row[f"{name}_hi"], name
    assert sum(row[f"share_{b}"] for b in BIN_COLUMNS) == pytest.approx(1.0)
    lines = memory_use_markdown([{"model": "m", "folder": "f", "unigram_nats": 5.0, **row}], 0.95)
    assert lines[-1].startswith("| m | `f` | 5.00 | ") and lines[-1].count("%)") == len(BIN_COLUMNS)


def test_too_few_documents_is_an_error():
    model = ae_model()
    with pytest.raises(ValueError, match="at least 2 dev documents"):
        document_losses(model, pairs(model, TEXTS[:1]))
