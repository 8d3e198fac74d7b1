"""The NUGGET language model's loss (NUGGET §6.2, eq. 11-12; App. B.2): the negative log likelihood
``-log p(y_i | y_{i-s:i-1}, Nugget(y_{1:i-s-1}))`` of every token of the current segment, trained in parallel.
Kept per token (no reduction): training averages it over the labelled tokens, and the perplexity over
words (footnote 6) sums a word's subword NLLs."""

from __future__ import annotations

import torch
from torch import nn


def language_model_nll(logits: torch.Tensor, labels: torch.Tensor, ignore_index: int) -> torch.Tensor:
    """Per-token cross-entropy, in float32, [B, T] (0 where ``labels`` is ``ignore_index``).

    ``logits``: [B, T, V], the decoder's output layer; ``labels``: [B, T]."""
    return nn.functional.cross_entropy(logits.float().transpose(1, 2), labels, ignore_index=ignore_index,
                                       reduction="none")
