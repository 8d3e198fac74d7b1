"""Char spans -> subword masks (masks.py)."""
import pytest

from multivec.io.resources import load_tokenizer
from multivec.subencoder.masks import batch_token_masks, spans_to_token_mask


def test_offsets_inside_a_span_are_in_and_special_tokens_never():
    offsets = [(0, 0), (0, 4), (5, 8), (8, 10), (11, 14), (0, 0)]
    special = [1, 0, 0, 0, 0, 1]
    assert spans_to_token_mask(offsets, [[5, 10]], special) == [0, 0, 1, 1, 0, 0]
    assert spans_to_token_mask(offsets, [[0, 4], [11, 14]], special) == [0, 1, 0, 0, 1, 0]
    # a subword that sticks out of the span is out; an empty span list gives an empty mask
    assert spans_to_token_mask(offsets, [[5, 9]], special) == [0, 0, 1, 0, 0, 0]
    assert spans_to_token_mask(offsets, [], special) == [0] * 6
    # a special token whose offset lies inside a span is still out
    assert spans_to_token_mask([(0, 4)], [[0, 4]], [1]) == [0]


def test_bad_spans_and_lengths_are_refused():
    with pytest.raises(ValueError, match="not \\[start, end\\)"):
        spans_to_token_mask([(0, 1)], [[3, 1]], [0])
    with pytest.raises(ValueError, match="special_tokens_mask has 2"):
        spans_to_token_mask([(0, 1)], [[0, 1]], [0, 0])


def test_real_tokenizer_marks_the_subwords_of_the_words():
    tokenizer = load_tokenizer("minilm")
    sentence = "Ruffalo was born in Kenosha."
    start = sentence.index("Kenosha")
    (masks,) = batch_token_masks(tokenizer, [sentence], [[[[start, start + len("Kenosha")]], [[0, 7]]]])
    ids = tokenizer(sentence)["input_ids"]
    tokens = tokenizer.convert_ids_to_tokens(ids)
    marked = [t for t, m in zip(tokens, masks[0]) if m]
    assert "".join(t.removeprefix("##") for t in marked) == "kenosha" and len(marked) > 1
    assert "".join(t.removeprefix("##") for t, m in zip(tokens, masks[1]) if m) == "ruffalo"
    assert masks[0][0] == masks[0][-1] == 0  # [CLS], [SEP]
