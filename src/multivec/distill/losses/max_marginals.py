"""Structural loss L_S as max-marginals with in-batch negatives (Burian 2023, §3.1; the authors' code):
``d(y_i, t_i) - gamma * mean_{j != i} d(y_i, t_j)``, per document, gamma = 1.

``d`` is the cosine distance (``1 - cos``) or the mean squared error; the teacher embeddings of the other
documents of the batch are the negatives.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from multivec.distill.losses.mse import _check_pair

DISTANCES = ("cosine", "mse")


def pairwise_distance(student: torch.Tensor, teacher: torch.Tensor, distance: str) -> torch.Tensor:
    """``D[i, j] = d(y_i, t_j)``: [B, B]."""
    if distance == "cosine":
        return 1.0 - F.normalize(student, dim=1) @ F.normalize(teacher, dim=1).T
    if distance == "mse":
        return (student.unsqueeze(1) - teacher.unsqueeze(0)).pow(2).mean(dim=2)
    raise ValueError(f"distill.loss.max_marginals_distance={distance!r}: expected one of {', '.join(DISTANCES)}")


class MaxMarginalsLoss(nn.Module):
    def __init__(self, gamma: float = 1.0, distance: str = "cosine"):
        super().__init__()
        if distance not in DISTANCES:
            raise ValueError(f"distill.loss.max_marginals_distance={distance!r}: expected one of "
                             f"{', '.join(DISTANCES)}")
        self.gamma, self.distance = gamma, distance

    def forward(self, student: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
        _check_pair(student, teacher)
        n = student.shape[0]
        if n < 2:
            raise ValueError("max-marginals needs at least 2 documents in a batch (in-batch negatives)")
        dist = pairwise_distance(student, teacher, self.distance)
        positive = dist.diagonal()
        negatives = (dist.sum(dim=1) - positive) / (n - 1)
        return positive - self.gamma * negatives
