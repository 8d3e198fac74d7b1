"""The SubEncoder (Chen et al. 2023 §3.1): one forward per sentence for all its propositions, App. C.1
baselines, saving and loading in one call."""

import pytest
import torch

from multivec.subencoder.configuration import SubEncoderConfig
from multivec.subencoder.model import SubEncoder, masked_mean

SENTENCES = ["The film, released in 2014, was produced by Disney in Burbank.",
             "Maleficent is an American fantasy film."]


def spans(sentence: str, *words: str) -> list[list[int]]:
    return [[sentence.index(w), sentence.index(w) + len(w)] for w in words]


SPANS = [[spans(SENTENCES[0], "film", "released", "2014"), spans(SENTENCES[0], "film", "produced by Disney"),
          spans(SENTENCES[0], "Burbank")],
         [spans(SENTENCES[1], "Maleficent", "is", "fantasy film"), spans(SENTENCES[1], "American")]]


@pytest.fixture(scope="module")
def tiny():
    return SubEncoder.from_backbone(SubEncoderConfig(encoder="tiny-random-bert", output_dim=16))


def test_one_forward_per_sentence_equals_encoding_each_proposition_alone(tiny):
    encoded, masks = tiny.span_masks(SENTENCES, SPANS)
    together = tiny.encode(SENTENCES, masks, batch_size=2)
    assert together.shape == (5, 16)
    alone = torch.cat([tiny.encode([SENTENCES[i]], [[mask]]) for i in range(2) for mask in masks[i]])
    torch.testing.assert_close(together, alone, atol=1e-5, rtol=1e-5)
    # different propositions of one sentence get different vectors (the mask matters)
    assert not torch.allclose(together[0], together[1])


def test_forward_counts_calls(tiny, monkeypatch):
    _, masks = tiny.span_masks(SENTENCES, SPANS)
    calls = []
    original = tiny.token_states
    monkeypatch.setattr(tiny, "token_states", lambda ids, att: calls.append(ids.shape[0]) or original(ids, att))
    tiny.encode(SENTENCES, masks, batch_size=8)
    assert calls == [2]  # two sentences, five propositions, one forward


def test_mask_pooling_is_the_mean_of_the_masked_token_states():
    model = SubEncoder.from_backbone(SubEncoderConfig(encoder="tiny-random-bert", head="none"))
    encoded, masks = model.span_masks(SENTENCES[:1], SPANS[:1])
    vectors = model.encode(SENTENCES[:1], masks)
    model.eval()  # no dropout, as in encode
    with torch.no_grad():
        ids = torch.tensor(encoded["input_ids"])
        states = model.token_states(ids, torch.ones_like(ids))[0]
    for j, mask in enumerate(masks[0]):
        chosen = [t for t, m in enumerate(mask) if m]
        torch.testing.assert_close(vectors[j], states[chosen].mean(0), atol=1e-5, rtol=1e-5)


def test_baseline_strategies_differ_and_token_subset_encodes_only_the_subset():
    model = SubEncoder.from_backbone(SubEncoderConfig(encoder="tiny-random-bert", head="none"))
    _, masks = model.span_masks(SENTENCES, SPANS)
    pooled = model.encode(SENTENCES, masks, strategy="mask_pooling")
    full = model.encode(SENTENCES, masks, strategy="full_mask")
    subset = model.encode(SENTENCES, masks, strategy="token_subset")
    assert pooled.shape == full.shape == subset.shape == (5, 32)
    assert not torch.allclose(pooled, full) and not torch.allclose(full, subset)
    # token subset: the same as encoding the proposition's words as a text of their own
    encoded, word_masks = model.span_masks(["Burbank"], [[spans("Burbank", "Burbank")]])
    alone = model.encode(["Burbank"], word_masks, strategy="mask_pooling")
    torch.testing.assert_close(subset[2], alone[0], atol=1e-5, rtol=1e-5)


def test_save_and_load_in_one_call(tiny, tmp_path):
    tiny.save_pretrained(tmp_path / "enc")
    loaded = SubEncoder.load(tmp_path / "enc")
    _, masks = tiny.span_masks(SENTENCES, SPANS)
    torch.testing.assert_close(loaded.encode(SENTENCES, masks), tiny.encode(SENTENCES, masks))
    assert loaded.output_dim == 16


def test_bad_input_gives_clear_errors(tiny, tmp_path):
    _, masks = tiny.span_masks(SENTENCES, SPANS)
    with pytest.raises(ValueError, match="sentence 0, proposition 0: the mask selects no token"):
        tiny.encode(SENTENCES, [[[0] * len(masks[0][0])], masks[1]])
    with pytest.raises(ValueError, match="mask of length 3"):
        tiny.encode(SENTENCES, [[[1, 1, 1]], masks[1]])
    with pytest.raises(ValueError, match="baseline"):
        tiny.encode(SENTENCES, masks, strategy="full_mask")
    with pytest.raises(FileNotFoundError, match="config.json is missing"):
        SubEncoder.load(tmp_path)
    with pytest.raises(ValueError, match="subencoder.model.head"):
        SubEncoderConfig(head="linear")
    with pytest.raises(ValueError, match="selects no token"):
        masked_mean(torch.zeros(1, 3, 2), torch.zeros(1, 3))
