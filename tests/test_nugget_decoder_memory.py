"""Position-aware decoder memory and the self-attention start of cross-attention (the demo's AE
base has to learn to copy from MiniLM's states, which carry little position; docs/nugget.md)."""

import numpy as np
import pytest
import torch

from multivec.nugget.configuration import ConfigError, NuggetConfig
from multivec.nugget.generation import beam_search, greedy_decode, hypothesis_scores
from multivec.nugget.modeling import NuggetModel

TEXTS = ["the cat sat on the mat.", "a small dog ran near the red house and the big tree."]


def warm_config(**changes):
    base = dict(encoder="tiny-random-bert", ratio=0.3, scorer_layer=2, decoder_layers=2, decoder_init="encoder",
                target_tokenizer="source", decoder_copy_layers=[1, 3], max_source_tokens=32, max_target_tokens=32)
    return NuggetConfig(**{**base, **changes})


def batch(model):
    processor = model.processor
    ids, mask = processor.collate_sources(processor.tokenize_sources(TEXTS), model.device)
    decoder_input_ids, labels = processor.target_batch(processor.target_tokenizer.encode(TEXTS, 32), model.device)
    return ids, mask, decoder_input_ids, labels


def test_options_need_the_warm_decoder():
    for key, value in (("decoder_memory_positions", True), ("decoder_cross_attention_init", "self_attention")):
        with pytest.raises(ConfigError, match=key):
            NuggetConfig(encoder="tiny-random-bert", **{key: value})
    with pytest.raises(ConfigError, match="decoder_cross_attention_init"):
        warm_config(decoder_cross_attention_init="aligned")
    with pytest.raises(ConfigError, match="decoder_memory_positions"):
        warm_config(decoder_memory_positions="yes")


def test_self_attention_start_copies_each_layers_attention():
    model = NuggetModel.from_backbone(warm_config(decoder_cross_attention_init="self_attention"))
    random_start = NuggetModel.from_backbone(warm_config())
    for j, i in enumerate([1, 3]):
        source = model.encoder.bert.encoder.layer[i].attention.state_dict()
        cross = model.decoder.decoder.encoder.layer[j].crossattention.state_dict()
        assert source.keys() == cross.keys()
        assert all(torch.equal(cross[name], source[name]) for name in source)
        other = random_start.decoder.decoder.encoder.layer[j].crossattention.self.query.weight
        assert not torch.equal(other, source["self.query.weight"])


@pytest.mark.parametrize("bottleneck", ["nuggets", "tokens"])
def test_memory_gets_the_position_of_each_slot_and_retrieval_vectors_do_not(bottleneck):
    extra = {} if bottleneck == "nuggets" else dict(bottleneck="tokens", ratio=1.0, residual=False, feedback=False)
    torch.manual_seed(0)
    plain = NuggetModel.from_backbone(warm_config(**extra)).eval()
    torch.manual_seed(0)
    positioned = NuggetModel.from_backbone(warm_config(decoder_memory_positions=True, **extra)).eval()
    positioned.load_state_dict(plain.state_dict())
    ids, mask, decoder_input_ids, labels = batch(plain)
    with torch.no_grad():
        a, b = plain.encode(ids, mask), positioned.encode(ids, mask)
        assert torch.equal(a.vectors, b.vectors)  # what PI/RR score is untouched
        assert torch.equal(plain.decoder_memory(a), a.vectors)
        embeddings = positioned.decoder.decoder.embeddings
        expected = b.vectors + embeddings.LayerNorm(embeddings.position_embeddings(b.indices))
        assert torch.allclose(positioned.decoder_memory(b), expected)
        # Training and every decoding path read the positioned memory.
        assert not torch.isclose(plain(ids, mask, decoder_input_ids, labels),
                                 positioned(ids, mask, decoder_input_ids, labels))
        scores = [hypothesis_scores(m, n, [[5, 6, 7], [8, 9]], 32) for m, n in ((plain, a), (positioned, b))]
        assert scores[0] != scores[1]


def test_decoding_reads_the_positioned_memory(monkeypatch):
    model = NuggetModel.from_backbone(warm_config(decoder_memory_positions=True)).eval()
    ids, mask, _, _ = batch(model)
    calls = []
    original = NuggetModel.decoder_memory
    monkeypatch.setattr(NuggetModel, "decoder_memory", lambda self, n: calls.append(1) or original(self, n))
    nuggets = model.encode(ids, mask)
    greedy_decode(model, nuggets, 4)
    assert len(calls) == 1
    beam_search(model, nuggets, 4, num_beams=2)
    assert len(calls) >= 2


def test_position_memory_refuses_the_scratch_decoder():
    model = NuggetModel.from_backbone(NuggetConfig(encoder="tiny-random-bert", max_source_tokens=32,
                                                   max_target_tokens=32, decoder_layers=1, decoder_heads=2,
                                                   target_tokenizer="source"))
    with pytest.raises(ValueError, match="decoder_init: encoder"):
        model.decoder.position_memory(torch.zeros(1, 2, dtype=torch.long))


def test_lm_histories_and_probability_gain_read_the_positioned_memory(monkeypatch):
    from multivec.nugget.analysis.probability_gain import document_gains, prepare_document
    from multivec.nugget.language_model import LMSettings, encode_segments

    model = NuggetModel.from_backbone(warm_config(decoder_memory_positions=True)).eval()
    # `segment` is no longer the default (Table 3 uses `none`); the positioned path must still work.
    settings = LMSettings(history="nuggets", memory_positions="segment")
    with torch.no_grad():
        memories = encode_segments(model, settings, TEXTS)
        sources = model.processor.tokenize_sources(TEXTS, settings.history_source_tokens)
        ids, mask = model.processor.collate_sources(sources, model.device)
        nuggets = model.encode(ids, mask)
        positioned = model.decoder_memory(nuggets)
    for row, memory in enumerate(memories):
        keep = nuggets.mask[row]
        assert torch.allclose(memory.vectors, positioned[row][keep])
        assert not torch.allclose(memory.vectors, nuggets.vectors[row][keep])
    calls = []
    original = NuggetModel.decoder_memory
    monkeypatch.setattr(NuggetModel, "decoder_memory", lambda self, n: calls.append(1) or original(self, n))
    document_gains(model, prepare_document(model, " ".join(TEXTS * 2), 20))
    assert calls


def test_lm_histories_without_positions_are_the_nugget_vectors():
    """`nugget_lm.memory_positions: none` (the position question for Table 3): the LM's history is the
    nuggets alone, so h segments no longer repeat positions 0..k; `segment` is the positioned memory above."""
    from multivec.nugget.language_model import LMSettings, encode_segments

    model = NuggetModel.from_backbone(warm_config(decoder_memory_positions=True)).eval()
    with torch.no_grad():
        bare = encode_segments(model, LMSettings(history="nuggets", memory_positions="none"), TEXTS)
        ids, mask = model.processor.collate_sources(model.processor.tokenize_sources(TEXTS, 256), model.device)
        nuggets = model.encode(ids, mask)
    for row, memory in enumerate(bare):
        assert torch.equal(memory.vectors, nuggets.vectors[row][nuggets.mask[row]])
    with pytest.raises(ValueError, match="memory_positions"):
        LMSettings(history="nuggets", memory_positions="stream")


def test_probability_gain_without_the_position_term_exposes_the_vectors_alone(monkeypatch):
    """Figs. 7-8 measured both ways (rules/nugget_gain.smk, GAIN_EXPOSURES): ``memory_positions=False`` exposes each
    nugget's vector without the position term, so the gains differ from the positioned ones, and equal the gains
    of a model whose decoder_memory returns the vectors."""
    from multivec.nugget.analysis.probability_gain import document_gains, prepare_document

    model = NuggetModel.from_backbone(warm_config(decoder_memory_positions=True)).eval()
    document = prepare_document(model, " ".join(TEXTS * 2), 20)
    positioned = document_gains(model, document)
    alone = document_gains(model, document, memory_positions=False)
    assert np.array_equal(positioned.positions, alone.positions)
    assert not np.allclose(np.nan_to_num(positioned.gains), np.nan_to_num(alone.gains))
    monkeypatch.setattr(NuggetModel, "decoder_memory", lambda self, nuggets: nuggets.vectors)
    np.testing.assert_allclose(np.nan_to_num(document_gains(model, document).gains), np.nan_to_num(alone.gains),
                               atol=1e-6)
