"""Character spans -> subword masks (Chen et al. 2023, App. A.3, last step).

A proposition is aligned to words of its sentence as character spans (``data/alignment.py``);
the encoder needs it as a 0/1 mask over the tokenizer's subwords. A subword is in the mask
when its character offset lies inside one of the spans; special tokens never are.
"""

from __future__ import annotations

from typing import Sequence


def spans_to_token_mask(offsets: Sequence[Sequence[int]], char_spans: Sequence[Sequence[int]],
                        special_tokens_mask: Sequence[int] | None = None) -> list[int]:
    """0/1 per subword: 1 when the subword's offset ``(start, end)`` lies inside a span.

    ``offsets`` are a fast tokenizer's ``offset_mapping`` for the sentence, ``char_spans`` are
    ``[start, end)`` character spans in the same sentence, ``special_tokens_mask`` marks special
    tokens (1) which are never in. A subword with an empty offset (``start == end``) is never in.
    """
    if special_tokens_mask is not None and len(special_tokens_mask) != len(offsets):
        raise ValueError(f"special_tokens_mask has {len(special_tokens_mask)} entries for {len(offsets)} offsets")
    spans = []
    for span in char_spans:
        if len(span) != 2 or span[0] > span[1]:
            raise ValueError(f"char span {list(span)!r} is not [start, end) with start <= end")
        spans.append((int(span[0]), int(span[1])))
    mask = []
    for i, (start, end) in enumerate(offsets):
        special = special_tokens_mask is not None and special_tokens_mask[i]
        inside = end > start and any(s <= start and end <= e for s, e in spans)
        mask.append(int(inside and not special))
    return mask


def batch_token_masks(tokenizer, sentences: Sequence[str], spans_per_sentence: Sequence[Sequence[Sequence[Sequence[int]]]],
                      max_length: int | None = None) -> list[list[list[int]]]:
    """For each sentence, one subword mask per proposition (its list of char spans).

    Tokenizes all sentences in one call of a fast tokenizer (offsets and special tokens).
    """
    if len(sentences) != len(spans_per_sentence):
        raise ValueError(f"{len(sentences)} sentences but {len(spans_per_sentence)} lists of spans")
    encoded = tokenizer(list(sentences), return_offsets_mapping=True, return_special_tokens_mask=True,
                        truncation=max_length is not None, max_length=max_length)
    return [[spans_to_token_mask(offsets, spans, special) for spans in propositions]
            for offsets, special, propositions in zip(encoded["offset_mapping"], encoded["special_tokens_mask"],
                                                      spans_per_sentence)]
