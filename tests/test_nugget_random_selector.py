"""The random selector (an ablation beyond NUGGET's Table 4): k = ceil(n·r) real tokens, uniform, reproducible."""

import math
from collections import Counter

import pytest
import torch

from multivec.nugget.configuration import ConfigError, NuggetConfig
from multivec.nugget.modeling import NuggetModel
from multivec.nugget.processing import load_source_tokenizer
from multivec.nugget.selection import RuleSelector, random_positions
from multivec.nugget.target_tokenizer import TargetTokenizer

TEXTS = ["The cat sat on the mat. It was happy, very happy indeed.", "Dogs bark loudly at night!",
         "A short one", "One more sentence, with a comma. And a second one; then a third!"]


@pytest.mark.parametrize("n, ratio", [(1, 0.1), (7, 0.1), (10, 0.3), (33, 0.25), (50, 1.0)])
def test_random_positions_draw_ceil_n_r_distinct_real_positions(n, ratio):
    ids = list(range(100, 100 + n))
    chosen = random_positions(ids, ratio, seed=0)
    assert len(chosen) == max(1, math.ceil(n * ratio - 1e-9))
    assert chosen == sorted(set(chosen)) and all(0 <= i < n for i in chosen)


def test_random_positions_are_a_function_of_the_ids_and_the_seed():
    ids = list(range(1000, 1060))
    assert random_positions(ids, 0.1, 0) == random_positions(list(ids), 0.1, 0)
    others = {tuple(random_positions(ids, 0.1, seed)) for seed in range(8)}
    assert len(others) > 1  # the seed changes the draw
    shifted = {tuple(random_positions([i + d for i in ids], 0.1, 0)) for d in range(8)}
    assert len(shifted) > 1  # so do the token ids


def test_random_positions_are_roughly_uniform():
    counts = Counter()
    for doc in range(2000):
        counts.update(random_positions([doc, *range(9)], 0.2, 0))  # n = 10, k = 2
    assert set(counts) == set(range(10))
    assert max(counts.values()) / min(counts.values()) < 1.3  # 400 expected per position


def test_random_positions_reject_an_empty_document():
    with pytest.raises(ValueError, match="no real token"):
        random_positions([], 0.1, 0)


def test_rule_selector_random_ignores_padding_and_batch_company():
    tokenizer = load_source_tokenizer("tiny-random-bert", "en_XX")
    selector = RuleSelector("random", 0.3, tokenizer, seed=5)
    encoded = tokenizer(TEXTS, padding=True, return_tensors="pt")
    ids, mask = encoded["input_ids"], encoded["attention_mask"]
    indices, nugget_mask = selector(ids, mask)
    for row in range(len(TEXTS)):
        n = int(mask[row].sum())
        chosen = indices[row, nugget_mask[row]].tolist()
        assert len(chosen) == math.ceil(n * 0.3 - 1e-9) and max(chosen) < n  # never a padding slot
        alone = tokenizer([TEXTS[row]], return_tensors="pt")
        alone_indices, alone_mask = selector(alone["input_ids"], alone["attention_mask"])
        assert alone_indices[0, alone_mask[0]].tolist() == chosen  # same nuggets without the batch's padding


@pytest.fixture(scope="module")
def bpe():
    return TargetTokenizer.train_bpe(TEXTS * 3, 300)


def test_random_selector_model_encodes_deterministically_and_trains(bpe):
    cfg = NuggetConfig(encoder="tiny-random-bert", ratio=0.3, scorer_layer=1, decoder_heads=2, decoder_ffn=64,
                       target_vocab_size=300, selector="random", residual=False)
    model = NuggetModel.from_backbone(cfg, bpe)
    assert model.scorer is None and model.rule_selector.kind == "random" and model.rule_selector.seed == cfg.seed
    processor = model.processor
    ids, mask = processor.collate_sources(processor.tokenize_sources(TEXTS), model.device)
    model.eval()
    first, second = model.encode(ids, mask), model.encode(ids, mask)
    assert first.scores is None
    assert torch.equal(first.indices, second.indices) and torch.equal(first.vectors, second.vectors)
    assert first.mask.sum(1).tolist() == [math.ceil(int(n) * 0.3 - 1e-9) for n in mask.sum(1)]
    model.train()
    decoder_input_ids, labels = processor.target_batch(processor.target_tokenizer.encode(TEXTS, 32), model.device)
    loss = model(ids, mask, decoder_input_ids, labels)
    loss.backward()
    assert torch.isfinite(loss) and model.type_embedding.weight.grad is not None


def test_random_selector_has_no_residual():
    with pytest.raises(ConfigError, match="residual"):
        NuggetConfig(selector="random")
