"""NUGGET selection, configuration and cross-attention bias (no model weights needed)."""

import math

import pytest
import torch

from multivec.nugget.configuration import ConfigError, NuggetConfig
from multivec.nugget.selection import (chunk_end_positions, cross_attention_bias, nugget_counts, select_top_k,
                                       sentence_end_positions)


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


def test_chunking_takes_last_punctuation_else_chunk_end():
    # 10 tokens, r = 0.2: chunks [0..4], [5..9]; a comma at 2 in the first, none in the second.
    marks = [False, False, True, False, False, False, False, False, False, False]
    assert chunk_end_positions(10, 0.2, marks) == [2, 9]
    assert chunk_end_positions(3, 0.9, [False] * 3) == [0, 1, 2]


def test_sentence_boundaries_include_last_content_token():
    # [CLS] a b . c d [SEP]: the period and the last word "d"; specials are never boundaries.
    finals = [False, False, False, True, False, False, False]
    content = [False, True, True, True, True, True, False]
    assert sentence_end_positions(7, finals, content) == [3, 5]
    assert sentence_end_positions(3, [False, True, False], [False, True, False]) == [1]


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
