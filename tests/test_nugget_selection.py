"""NUGGET selection, configuration and cross-attention bias (no model weights needed)."""

import math

import pytest
import torch

from multivec.nugget.configuration import (CHUNK_PUNCTUATION, TABLE4_ABLATIONS, ConfigError, NuggetConfig,
                                           ablation_config)
from multivec.nugget.selection import (CHUNK_FINAL, chunk_end_positions, cross_attention_bias, nugget_counts,
                                       select_top_k, sentence_final_token_mask)


def test_nugget_counts_ceil_without_float_error():
    lengths = torch.tensor([10, 10, 1, 7, 128, 3])
    assert nugget_counts(lengths, 0.3).tolist() == [3, 3, 1, 3, 39, 1]
    assert nugget_counts(torch.tensor([20]), 0.05).tolist() == [1]
    assert nugget_counts(torch.tensor([5]), 1.0).tolist() == [5]


@pytest.mark.parametrize("ratio", [0.1, 0.25, 0.5, 1.0])
def test_top_k_counts_real_tokens_only_and_is_ascending(ratio):
    generator = torch.Generator().manual_seed(0)
    lengths = [17, 5, 1, 40, 23]
    width = max(lengths)
    mask = torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]
    # Padding gets the highest scores: it must still never be chosen.
    scores = torch.randn(len(lengths), width, generator=generator).masked_fill(~mask, 100.0)
    indices, nugget_mask = select_top_k(scores, mask, ratio)
    for row, n in enumerate(lengths):
        k = math.ceil(n * ratio - 1e-9)
        assert int(nugget_mask[row].sum()) == k
        chosen = indices[row, :k].tolist()
        assert chosen == sorted(chosen) and len(set(chosen)) == k
        assert all(0 <= i < n for i in chosen)
        best = scores[row, :n].topk(k).indices.sort().values.tolist()
        assert chosen == best
        assert not nugget_mask[row, k:].any()


def test_chunk_punctuation_options_are_comma_and_period_by_default():
    assert set(CHUNK_FINAL) == set(CHUNK_PUNCTUATION)  # every config option has its punctuation set
    assert NuggetConfig().chunk_punctuation == "comma_period"
    assert CHUNK_FINAL["comma_period"] == {",", ".", "，", "。"}  # §7.1: "comma or period"
    assert CHUNK_FINAL["comma_period"] < CHUNK_FINAL["wide"]


def test_chunking_takes_last_punctuation_else_chunk_end():
    # 10 tokens, r = 0.2: chunks [0..4], [5..9]; a comma at 2 in the first, none in the second.
    marks = [False, False, True, False, False, False, False, False, False, False]
    assert chunk_end_positions(10, 0.2, marks) == [2, 9]
    assert chunk_end_positions(3, 0.9, [False] * 3) == [0, 1, 2]


def word_offsets(text):
    """A whitespace/punctuation tokenizer's offset mapping, with [CLS] and [SEP] as (0, 0)."""
    import re

    return [(0, 0)] + [m.span() for m in re.finditer(r"\w+|[^\w\s]", text)] + [(0, 0)]


def test_sentence_final_tokens_come_from_real_boundaries_not_periods():
    text = "Dr. Who came. He left"
    offsets = word_offsets(text)  # [CLS] Dr . Who came . He left [SEP]
    # The corpus says: sentences end after "came." (13) and at the end of the text.
    assert sentence_final_token_mask(offsets, [13, len(text)], text) == [0, 0, 0, 0, 0, 1, 0, 1, 0]
    # An end recorded after the following space, with SentencePiece-style spans that include the leading
    # space ("▁He" = " He"), and an explicit special-token mask: still the period after "came".
    spaced = [(a - 1, b) if text[a - 1:a] == " " else (a, b) for a, b in offsets]
    assert spaced[6] == (13, 16)
    assert sentence_final_token_mask(spaced, [14, len(text)], text, [1, 0, 0, 0, 0, 0, 0, 0, 1]) == \
        [0, 0, 0, 0, 0, 1, 0, 1, 0]


def test_an_empty_document_ends_at_its_last_token():
    assert sentence_final_token_mask(word_offsets(""), [], "") == [0, 1]  # [CLS] [SEP]: one nugget, at [SEP]
    assert sentence_final_token_mask(word_offsets(" "), [], " ", [1, 1]) == [0, 1]


def test_sentence_final_tokens_after_truncation():
    text = "One two. Three four five."
    offsets = word_offsets(text)[:5]  # truncated: [CLS] One two . Three
    assert sentence_final_token_mask(offsets, [8, len(text)], text) == [0, 0, 0, 1, 1]


@pytest.mark.parametrize("ends, message", [([], "sentence_ends is empty"), ([5, 3], "ascending"),
                                            ([0], "each end must be"), ([99], "at most len"),
                                            ([4.0], "an int")])
def test_sentence_final_tokens_reject_bad_ends(ends, message):
    text = "One two. Three"
    with pytest.raises(ValueError, match=message):
        sentence_final_token_mask(word_offsets(text), ends, text)


def test_cross_attention_bias_scales_scores_and_blocks_padding():
    mask = torch.tensor([[True, True, False]])
    scores = torch.tensor([[2.0, -4.0, 9.0]])
    bias = cross_attention_bias(mask, scores, head_dim=16, dtype=torch.float32)
    assert bias.shape == (1, 1, 1, 3)
    assert bias[0, 0, 0, :2].tolist() == [0.5, -1.0]
    assert bias[0, 0, 0, 2] == torch.finfo(torch.float32).min
    plain = cross_attention_bias(mask, None, head_dim=16, dtype=torch.float32)
    assert plain[0, 0, 0, :2].tolist() == [0.0, 0.0]


def test_config_round_trip_and_unknown_keys():
    cfg = NuggetConfig(objective="mt", ratio=0.2)
    assert cfg.tgt_lang == "zh_CN"
    assert NuggetConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ConfigError, match="bogus_key"):
        NuggetConfig.from_dict({**cfg.to_dict(), "bogus_key": 1})


@pytest.mark.parametrize("changes, key", [
    ({"selector": "chunking"}, "residual"),  # rule selectors have no scores
    ({"bottleneck": "mean", "residual": False}, "feedback"),
    ({"architecture": "mbart", "encoder": "tiny-random-mbart"}, "target_tokenizer"),
    ({"ratio": 0.0}, "ratio"),
])
def test_config_rejects_inconsistent_values(changes, key):
    with pytest.raises(ConfigError, match=f"NuggetConfig.{key}"):
        NuggetConfig(**changes)


@pytest.mark.parametrize("changes, key", [
    ({"frozen_layers": -2}, "frozen_layers"),
    ({"frozen_layers": True}, "frozen_layers"),
    ({"chunk_punctuation": "all"}, "chunk_punctuation"),
    ({"selector": "sentence_boundary", "residual": False, "noise_deletion": 0.3}, "noise_deletion"),
])
def test_config_rejects_bad_frozen_layers_punctuation_and_noisy_sentence_ends(changes, key):
    with pytest.raises(ConfigError, match=f"NuggetConfig.{key}"):
        NuggetConfig(**changes)


def test_frozen_bottom_defaults_to_the_scorer_layer():
    assert NuggetConfig(scorer_layer=3).frozen_bottom == 3
    assert NuggetConfig(scorer_layer=3, frozen_layers=-1).frozen_bottom == -1
    assert NuggetConfig(scorer_layer=3, frozen_layers=6).frozen_bottom == 6


@pytest.mark.parametrize("name", list(TABLE4_ABLATIONS))
def test_table4_ablation_configs_name_what_they_change(name):
    base = {"encoder": "tiny-random-bert", "scorer_layer": 1, "frozen_layers": -1, "feedback": False,
            "decoder_heads": 2}
    cfg = ablation_config(name, base)
    assert cfg.encoder == "tiny-random-bert" and cfg.decoder_heads == 2  # the base's other keys are kept
    expected_layer = {"nugget_l0": 0, "nugget_l6": 6, "nugget_l9": 9}.get(name, 3)
    assert cfg.objective == "mt" and cfg.scorer_layer == expected_layer and cfg.frozen_bottom == expected_layer
    assert cfg.feedback == (name != "no_feedback")
    assert cfg.selector == {"chunking": "chunking", "sentence_boundary": "sentence_boundary",
                            "random": "random"}.get(name, "learned")
    assert cfg.residual == (cfg.selector == "learned")
    assert cfg.ratio == (0.033 if name in ("nugget_r_sb", "sentence_boundary") else 0.1)
    with pytest.raises(ConfigError, match="unknown Table 4 ablation 'nugget_l4'"):
        ablation_config("nugget_l4", base)
