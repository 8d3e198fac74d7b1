"""The decoder warm-started from the encoder's own layers (decoder_init: encoder, Rothe et al. 2020)."""

import pytest
import torch

from multivec.nugget.configuration import ConfigError, NuggetConfig
from multivec.nugget.generation import beam_search, greedy_decode
from multivec.nugget.modeling import NuggetModel

TEXTS = ["the cat sat on the mat.", "a small dog ran near the red house and the big tree."]


def warm_config(**changes):
    base = dict(encoder="tiny-random-bert", ratio=0.3, scorer_layer=2, decoder_layers=2, decoder_init="encoder",
                target_tokenizer="source", decoder_copy_layers=[1, 3], max_source_tokens=32, max_target_tokens=32)
    return NuggetConfig(**{**base, **changes})


@pytest.fixture(scope="module")
def model():
    return NuggetModel.from_backbone(warm_config())


def batch(model):
    processor = model.processor
    ids, mask = processor.collate_sources(processor.tokenize_sources(TEXTS), model.device)
    decoder_input_ids, labels = processor.target_batch(processor.target_tokenizer.encode(TEXTS, 32), model.device)
    return ids, mask, decoder_input_ids, labels


def test_decoder_layers_copy_the_named_encoder_layers(model):
    encoder_layers, decoder_layers = model.encoder.bert.encoder.layer, model.decoder.decoder.encoder.layer
    for j, i in enumerate([1, 3]):
        for name, param in encoder_layers[i].attention.named_parameters():
            assert torch.equal(dict(decoder_layers[j].attention.named_parameters())[name], param), name
        assert torch.equal(decoder_layers[j].intermediate.dense.weight, encoder_layers[i].intermediate.dense.weight)
        assert torch.equal(decoder_layers[j].output.dense.weight, encoder_layers[i].output.dense.weight)
    assert not torch.equal(decoder_layers[0].attention.self.query.weight, encoder_layers[0].attention.self.query.weight)
    # The decoder's word embedding is a trainable COPY of the encoder's (which the frozen bottom freezes), and
    # its output layer is untied (tied to the frozen encoder matrix, the decoder could not learn).
    encoder_words = model.encoder.bert.embeddings.word_embeddings.weight
    decoder_words = model.decoder.input_embedding().weight
    assert decoder_words is not encoder_words and torch.equal(decoder_words, encoder_words)
    assert not encoder_words.requires_grad and decoder_words.requires_grad
    output = model.decoder.output_weight()
    assert output is not decoder_words and output is not encoder_words and output.requires_grad
    assert torch.equal(model.decoder.decoder.embeddings.position_embeddings.weight,
                       model.encoder.bert.embeddings.position_embeddings.weight)


def test_the_whole_warm_decoder_learns_at_lr_scratch(model):
    new = model.new_parameter_names()
    decoder = {n for n, p in model.named_parameters() if n.startswith("decoder.") and p.requires_grad}
    assert decoder <= new
    assert {"decoder.output_projection.weight", "decoder.final_logits_bias",
            "decoder.decoder.encoder.layer.0.attention.self.query.weight"} <= new
    assert not any(n.startswith("encoder.") for n in new)


def test_save_load_roundtrip_keeps_weights_and_untied_output(model, tmp_path):
    model.eval()
    with torch.no_grad():
        expected = float(model(*batch(model)))
    model.save_pretrained(tmp_path)
    loaded = NuggetModel.from_pretrained(tmp_path)
    assert loaded.decoder.input_embedding().weight is not loaded.encoder.bert.embeddings.word_embeddings.weight
    assert loaded.decoder.output_weight() is not loaded.decoder.input_embedding().weight
    with torch.no_grad():
        assert float(loaded(*batch(loaded))) == pytest.approx(expected, abs=1e-6)


def test_cached_generation_matches_full_recomputation_and_beam_one_is_greedy(model):
    model.eval()
    ids, mask, *_ = batch(model)
    nuggets = model.encode(ids, mask)
    greedy = greedy_decode(model, nuggets, 6)
    assert beam_search(model, nuggets, 6, num_beams=1) == greedy
    assert len(beam_search(model, nuggets, 6, num_beams=3)) == len(TEXTS)
    # Step-by-step decoding with the KV cache equals running the whole prefix without a cache.
    tok = model.processor.target_tokenizer
    for row, generated in enumerate(greedy):
        prefix = torch.tensor([[tok.eos_id, *tok.prefix_ids, *generated]])
        one = type(nuggets)(nuggets.vectors[row:row + 1], nuggets.mask[row:row + 1], nuggets.indices[row:row + 1],
                            nuggets.scores[row:row + 1])
        with torch.no_grad():
            hidden, _ = model.decoder(prefix, one.vectors, model.memory_bias(one))
            full = model.decoder.logits(hidden)[0].argmax(-1).tolist()
        start = len(tok.prefix_ids)
        assert full[start:start + len(generated)] == generated


def test_residual_scores_reach_the_warm_decoder(model):
    model.train()
    loss = model(*batch(model))
    loss.backward()
    assert model.scorer is not None
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in model.scorer.parameters())
    model.zero_grad()


@pytest.mark.parametrize("changes, key", [
    ({"target_tokenizer": "bpe"}, "decoder_init"),
    ({"decoder_copy_layers": [0]}, "decoder_copy_layers"),
    ({"decoder_init": "scratch"}, "decoder_copy_layers"),
    ({"decoder_init": "nonsense", "decoder_copy_layers": None}, "decoder_init"),
])
def test_bad_settings_name_the_key(changes, key):
    with pytest.raises(ConfigError, match=key):
        warm_config(**changes)


def test_copy_layer_beyond_the_encoder_is_refused():
    with pytest.raises(ValueError, match="encoder has layers 0..3"):
        NuggetModel.from_backbone(warm_config(decoder_copy_layers=[0, 7]))
