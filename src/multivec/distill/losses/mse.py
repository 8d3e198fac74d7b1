"""Structural loss L_S as mean squared error (Burian 2023, §3.1 eq. 3.1 with L_S = MSE), per document."""

from __future__ import annotations

import torch
from torch import nn


class MSELoss(nn.Module):
    """``mean_k (y_ik - t_ik)^2`` for each document i: shape [B]."""

    def forward(self, student: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
        _check_pair(student, teacher)
        return (student - teacher).pow(2).mean(dim=1)


def _check_pair(student: torch.Tensor, teacher: torch.Tensor) -> None:
    if student.ndim != 2 or student.shape != teacher.shape:
        raise ValueError(f"structural loss: student {tuple(student.shape)} and teacher {tuple(teacher.shape)} "
                         "embeddings must both be [batch, dim] of the same shape")
