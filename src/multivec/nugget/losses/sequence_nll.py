"""The encoder-decoder's loss (NUGGET §3.4): the negative log likelihood ``-log p(y | w; θ)`` of the target
document y given the source w (y = w for autoencoding, the translation for MT), as the mean cross-entropy
over the target tokens of the batch (the paper's sum over the dataset, divided by the number of tokens)."""

from __future__ import annotations

import torch
from torch import nn


def sequence_nll(logits: torch.Tensor, labels: torch.Tensor, predicted: torch.Tensor) -> torch.Tensor:
    """Mean token cross-entropy, in float32, of ``labels[predicted]`` under ``logits``.

    ``logits``: [N, V], the output layer at the N positions where ``predicted`` holds (only those are
    projected: the output layer is the costliest matrix product); ``labels``: the padded label ids;
    ``predicted``: the mask of the positions with a label (``labels != IGNORE_INDEX``)."""
    return nn.functional.cross_entropy(logits.float(), labels[predicted])
