"""Supervised contrastive loss over propositions (Chen et al. 2023, §3.2, the unnumbered loss, and App. B):

    L = Σ_{i∈I} -1/|P(i)| Σ_{p∈P(i)} log( exp(v_i·v_p/τ) / Σ_{j∈I∖{i}} exp(v_i·v_j/τ) )

over the N propositions I of the minibatch, P(i) the positives of proposition i, τ the temperature.

Every proposition in the (all-gathered) batch is an anchor; propositions with the same label are its
positives, all others (propositions of the same sentence included) its negatives. The loss is
``pytorch-metric-learning``'s ``SupConLoss`` (Khosla et al. 2020), not a hand-written copy; embeddings
are L2-normalised by its default cosine distance. Under DDP, embeddings and labels from every rank are
gathered with gradients first (``all_gather_with_grad``), as App. B describes; labels are made unique per
rank (offset by ``rank * LABEL_STRIDE``) so that labels of different ranks never collide.

Temperature: the paper states 0.01 (App. B); the authors' code trains with the library default 0.1.
It is ``subencoder.train.temperature`` in the config (see docs/subencoder.md for the default).
"""

from __future__ import annotations

import torch

from multivec.training.distributed import all_gather_with_grad

LABEL_STRIDE = 1 << 40  # labels of rank r are shifted by r * LABEL_STRIDE before the gather


def supcon_loss(embeddings: torch.Tensor, labels: torch.Tensor, temperature: float) -> torch.Tensor:
    """SupCon over ``embeddings`` (N, d) with integer ``labels`` (N,), on one process.

    Anchors without any positive contribute nothing (the library's behaviour); a batch without a single
    positive pair gives a loss of 0 that still carries a graph.
    """
    if embeddings.ndim != 2 or labels.ndim != 1 or embeddings.shape[0] != labels.shape[0]:
        raise ValueError(f"supcon_loss: embeddings {tuple(embeddings.shape)} and labels {tuple(labels.shape)} "
                         "must be (N, d) and (N,)")
    if temperature <= 0:
        raise ValueError(f"subencoder.train.temperature={temperature}: must be > 0")
    from pytorch_metric_learning.losses import SupConLoss

    return SupConLoss(temperature=temperature)(embeddings.float(), labels)


def distributed_supcon_loss(embeddings: torch.Tensor, labels: torch.Tensor, temperature: float) -> torch.Tensor:
    """``supcon_loss`` over the embeddings of every rank (gathered with gradients); one process: the same.

    Ranks may hold different numbers of propositions: each pads to the largest count (padding rows are
    dropped after the gather).
    """
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return supcon_loss(embeddings, labels, temperature)
    world, rank = dist.get_world_size(), dist.get_rank()
    count = torch.tensor([embeddings.shape[0]], device=embeddings.device)
    counts = [torch.zeros_like(count) for _ in range(world)]
    dist.all_gather(counts, count)
    largest = int(max(int(c) for c in counts))
    pad = largest - embeddings.shape[0]
    padded = torch.cat([embeddings, embeddings.new_zeros(pad, embeddings.shape[1])]) if pad else embeddings
    shifted = labels.long() + rank * LABEL_STRIDE
    shifted = torch.cat([shifted, shifted.new_full((pad,), -1)]) if pad else shifted
    all_embeddings = all_gather_with_grad(padded)
    gathered_labels = [torch.empty_like(shifted) for _ in range(world)]
    dist.all_gather(gathered_labels, shifted)  # labels need no gradient; same rank order as the embeddings
    all_labels = torch.cat(gathered_labels)
    keep = torch.cat([torch.arange(largest, device=embeddings.device) < int(c) for c in counts])
    return supcon_loss(all_embeddings[keep], all_labels[keep], temperature)
