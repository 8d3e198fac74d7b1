"""Nugget selection (paper §3.1, eq. 2-4) and the rule-based selectors of the ablations (§7.1, Table 4).

- ``NuggetScorer``: s = FFN(X^(l)), one score per token from encoder layer l (eq. 2).
- ``select_top_k``: k = ceil(n·r) per document over its n real (non-padding) tokens, TopK by s
  (eq. 3), returned in original token order so nuggets keep the text's order (eq. 4).
- ``RuleSelector``: the two rule selectors of §7.1 behind the same output (indices + mask), without
  scores. "Chunking": ceil(n·r) equal chunks, each ending at its last comma or period, else its last
  token (``chunk_end_positions``). "Sentence boundary": the tokens that end a sentence, from the corpus's
  real sentence boundaries (``sentence_final_token_mask`` maps the character offsets of sentence ends to
  tokens), never guessed from punctuation (so "Dr." does not end a sentence).
- The random selector (an ablation beyond the paper's Table 4): k = ceil(n·r) of the n real tokens drawn
  uniformly without replacement (``random_positions``), from the same candidates as the learned TopK
  (special tokens included: the learned selector may pick them too). The draw is seeded by the document's
  token ids and the model's seed, so a document gets the same nuggets in every batch, epoch and run.

All selectors return ``indices`` (B × k_max, ascending within each row, 0 in padded slots) and
``nugget_mask`` (B × k_max, True for real nuggets): documents in a batch have different k.
"""

from __future__ import annotations

import hashlib
import math
from typing import Iterable, Sequence

import torch
from torch import nn

# Punctuation that may end a chunk (after stripping sub-word markers): §7.1 says "comma or period"
# (ASCII and CJK forms); "wide" adds the other clause and sentence marks.
CHUNK_FINAL = {
    "comma_period": frozenset({",", ".", "，", "。"}),
    "wide": frozenset({",", ".", "，", "。", "、", ";", "；", "!", "?", "！", "？", "…"}),
}
_SUBWORD_MARKERS = ("▁", "Ġ", "##")


class NuggetScorer(nn.Module):
    """Two-layer FFN from a token state to a scalar score (eq. 2)."""

    def __init__(self, hidden_size: int):
        super().__init__()
        self.ffn = nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.ReLU(), nn.Linear(hidden_size, 1))

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.ffn(hidden).squeeze(-1)


def nugget_counts(lengths: torch.Tensor, ratio: float) -> torch.Tensor:
    """k = ceil(n·r), at least 1 and at most n, for each document of ``lengths`` real tokens."""
    # The small epsilon keeps float error from rounding exact products up (10 · 0.3 = 3.0000000000000004).
    k = torch.ceil(lengths.to(torch.float64) * ratio - 1e-9).to(torch.long)
    return torch.minimum(k.clamp(min=1), lengths.to(torch.long))


def _pack_ascending(candidates: torch.Tensor, counts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Keep the first ``counts[b]`` entries of each row, sort them ascending, pad with 0 and mask."""
    k_max = candidates.shape[1]
    slot = torch.arange(k_max, device=candidates.device)
    nugget_mask = slot[None, :] < counts[:, None]
    sentinel = torch.iinfo(candidates.dtype).max
    indices = torch.where(nugget_mask, candidates, torch.full_like(candidates, sentinel)).sort(dim=1).values
    return torch.where(nugget_mask, indices, torch.zeros_like(indices)), nugget_mask


def select_top_k(scores: torch.Tensor, token_mask: torch.Tensor, ratio: float) -> tuple[torch.Tensor, torch.Tensor]:
    """TopK of ``scores`` (B × n) among real tokens (``token_mask``), k = ceil(n·r) per row."""
    counts = nugget_counts(token_mask.sum(dim=1), ratio)
    k_max = int(counts.max())
    # Padding can never win: its score is -inf, and a row takes only its own k <= n entries.
    masked = scores.detach().masked_fill(~token_mask, float("-inf"))
    top = masked.topk(k_max, dim=1).indices
    return _pack_ascending(top, counts)


def _pad_position_lists(positions: Sequence[Sequence[int]], device) -> tuple[torch.Tensor, torch.Tensor]:
    k_max = max(len(p) for p in positions)
    indices = torch.zeros(len(positions), k_max, dtype=torch.long, device=device)
    mask = torch.zeros(len(positions), k_max, dtype=torch.bool, device=device)
    for row, pos in enumerate(positions):
        indices[row, : len(pos)] = torch.tensor(sorted(pos), dtype=torch.long)
        mask[row, : len(pos)] = True
    return indices, mask


def chunk_end_positions(n: int, ratio: float, is_chunk_final: Sequence[bool]) -> list[int]:
    """Split positions 0..n-1 into ceil(n·r) near-equal chunks; per chunk the last comma/period, else its last token."""
    k = max(1, min(n, math.ceil(n * ratio - 1e-9)))
    bounds = [i * n // k for i in range(k + 1)]  # strictly increasing because k <= n
    chosen = []
    for start, end in zip(bounds[:-1], bounds[1:]):
        marks = [i for i in range(start, end) if is_chunk_final[i]]
        chosen.append(marks[-1] if marks else end - 1)
    return chosen


def document_seed(ids: Sequence[int], seed: int) -> int:
    """A 63-bit seed from a document's token ids and a model seed (stable across processes, unlike hash())."""
    digest = hashlib.blake2b(repr((int(seed), [int(i) for i in ids])).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def random_positions(ids: Sequence[int], ratio: float, seed: int) -> list[int]:
    """k = ceil(n·r) of positions 0..n-1 (n = len(ids), the real tokens) drawn uniformly, ascending."""
    n = len(ids)
    if n == 0:
        raise ValueError("random selector: a document has no real token")
    k = max(1, min(n, math.ceil(n * ratio - 1e-9)))
    generator = torch.Generator().manual_seed(document_seed(ids, seed))
    return sorted(torch.randperm(n, generator=generator)[:k].tolist())


def sentence_final_token_mask(offsets: Sequence[Sequence[int]], sentence_ends: Sequence[int], source: str,
                              special_mask: Sequence[int] | None = None) -> list[int]:
    """Per-token 1 at the last token of each sentence, 0 elsewhere.

    ``offsets``: the tokenizer's offset mapping of ``source`` ((start, end) characters per token);
    ``sentence_ends``: character offsets (exclusive) in ``source`` where a sentence ends, ascending;
    ``special_mask``: 1 for special tokens ([CLS], language codes, </s>), which never end a sentence
    (without it, tokens with an empty span count as special). A sentence ends at the last content token
    starting before its end (whitespace before the end is skipped). A sentence cut off by truncation ends
    at the last token kept, so a truncated document still gets its last nugget. An empty document (no
    content token; the released PI set has two) has no sentence: its one nugget is its last token (the
    EOS), as k = ceil(n·r) >= 1 gives every other selector one.
    """
    if not sentence_ends and source.strip():
        raise ValueError("sentence_ends is empty: every non-empty source has at least one sentence "
                         "(its end is len(source))")
    previous = 0
    for end in sentence_ends:
        if type(end) is not int or not previous < end <= len(source):
            raise ValueError(f"sentence_ends={list(sentence_ends)!r}: each end must be an int in "
                             f"({previous}, {len(source)}] (ascending, at most len(source))")
        previous = end
    special = special_mask if special_mask is not None else [int(b <= a) for a, b in offsets]
    content = [i for i, (a, b) in enumerate(offsets) if not special[i] and b > a]
    mask = [0] * len(offsets)
    if not content:
        if offsets:
            mask[-1] = 1
        return mask
    cursor = 0
    for end in sentence_ends:
        while end > 0 and source[end - 1].isspace():
            end -= 1
        while cursor + 1 < len(content) and offsets[content[cursor + 1]][0] < end:
            cursor += 1
        if offsets[content[cursor]][0] < end:
            mask[content[cursor]] = 1
    return mask


class RuleSelector:
    """Selection without scores: the rules of §7.1, or the random draw; the chunking punctuation flags are
    computed once per tokenizer. ``seed`` seeds the random selector (with each document's token ids)."""

    def __init__(self, kind: str, ratio: float, tokenizer, chunk_punctuation: str = "comma_period", seed: int = 0):
        if kind not in ("chunking", "sentence_boundary", "random"):
            raise ValueError(f"unknown rule selector {kind!r}")
        if chunk_punctuation not in CHUNK_FINAL:
            raise ValueError(f"unknown chunk_punctuation {chunk_punctuation!r}; known: {', '.join(CHUNK_FINAL)}")
        self.kind, self.ratio, self.seed = kind, ratio, seed
        self.chunk_final_ids = _ids_of(tokenizer.get_vocab(), CHUNK_FINAL[chunk_punctuation])

    def __call__(self, input_ids: torch.Tensor, token_mask: torch.Tensor,
                 sentence_end_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        if self.kind == "chunking":
            rows = []
            for ids, mask in zip(input_ids.tolist(), token_mask.tolist()):
                n = sum(mask)  # padding is on the right
                rows.append(chunk_end_positions(n, self.ratio, [i in self.chunk_final_ids for i in ids[:n]]))
            return _pad_position_lists(rows, input_ids.device)
        if self.kind == "random":
            rows = [random_positions(ids[: sum(mask)], self.ratio, self.seed)  # padding is on the right
                    for ids, mask in zip(input_ids.tolist(), token_mask.tolist())]
            return _pad_position_lists(rows, input_ids.device)
        if sentence_end_mask is None:
            raise ValueError("selector 'sentence_boundary' needs sentence_end_mask (B × n, 1 at sentence-final "
                             "tokens), built from the corpus's source_sentence_ends by "
                             "NuggetProcessor.sentence_end_masks")
        if sentence_end_mask.shape != input_ids.shape:
            raise ValueError(f"sentence_end_mask has shape {tuple(sentence_end_mask.shape)}, "
                             f"input_ids {tuple(input_ids.shape)}: one flag per source token")
        ends = sentence_end_mask.bool() & token_mask.bool()
        empty = (~ends.any(dim=1)).nonzero().flatten().tolist()
        if empty:
            raise ValueError(f"sentence_end_mask marks no real token in batch row(s) {empty}: "
                             "every document has at least one sentence end")
        return _pad_position_lists([row.nonzero().flatten().tolist() for row in ends], input_ids.device)


def _ids_of(vocab: dict[str, int], symbols: Iterable[str]) -> set[int]:
    symbols = set(symbols)
    found = set()
    for token, token_id in vocab.items():
        stripped = token
        for marker in _SUBWORD_MARKERS:
            stripped = stripped.replace(marker, "")
        if stripped and stripped in symbols:
            found.add(token_id)
    return found


def cross_attention_bias(nugget_mask: torch.Tensor, scores: torch.Tensor | None, head_dim: int,
                         dtype: torch.dtype) -> torch.Tensor:
    """The additive cross-attention mask (B × 1 × 1 × k) carrying the residual connection (eq. 5).

    The decoder adds this tensor to q·k/sqrt(d_head); adding s_j/sqrt(d_head) makes the logit
    (q·k + s_j)/sqrt(d_head), the same scaling as the dot product. Padding slots get the dtype's
    most negative value. ``scores=None`` (no residual) leaves only the padding mask.
    """
    blocked = torch.finfo(dtype).min
    if scores is None:
        bias = torch.zeros(nugget_mask.shape, dtype=dtype, device=nugget_mask.device)
    else:
        bias = (scores * head_dim ** -0.5).to(dtype)
    bias = bias.masked_fill(~nugget_mask, blocked)
    return bias[:, None, None, :]
