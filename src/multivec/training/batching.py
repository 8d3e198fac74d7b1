"""Batches shared by every work's training task: the batches of an epoch, and padded id tensors.

``epoch_batches`` is a pure function of (seed, epoch), so a resumed run recomputes the batches it would have
seen; with ``length_sorted`` it sorts documents by length within pools of ``LENGTH_POOL_BATCHES`` batches
(less padding) and then shuffles the batches. ``pad_sequences`` pads id lists to one width with a mask.
"""

from __future__ import annotations

from typing import Sequence

import torch

from multivec.training.engine import seeded_generator

LENGTH_POOL_BATCHES = 50  # length-sorted batching sorts within pools of this many batches


def epoch_batches(lengths: Sequence[int], batch_size: int, seed: int, epoch: int,
                  length_sorted: bool) -> list[list[int]]:
    """The batches of one epoch, a pure function of (seed, epoch): resumption recomputes it."""
    generator = seeded_generator(seed, "epoch", epoch)
    order = torch.randperm(len(lengths), generator=generator).tolist()
    if not length_sorted:
        return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    pool = batch_size * LENGTH_POOL_BATCHES
    batches = []
    for start in range(0, len(order), pool):
        chunk = sorted(order[start:start + pool], key=lambda i: lengths[i])
        batches += [chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size)]
    shuffle = torch.randperm(len(batches), generator=generator).tolist()
    return [batches[i] for i in shuffle]


def pad_sequences(sequences: Sequence[Sequence[int]], pad_value: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids, mask): the sequences right-padded with ``pad_value`` to the longest, mask 1 on real positions."""
    width = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), width), pad_value, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, seq in enumerate(sequences):
        ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
        mask[row, : len(seq)] = 1
    return ids.to(device), mask.to(device)
