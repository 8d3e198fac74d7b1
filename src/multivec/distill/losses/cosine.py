"""Structural loss L_S as cosine distance (Burian 2023, §3.1 eq. 3.1 with L_S = 1 - cos), per document."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from multivec.distill.losses.mse import _check_pair


class CosineDistanceLoss(nn.Module):
    """``1 - cos(y_i, t_i)`` for each document i: shape [B]."""

    def forward(self, student: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
        _check_pair(student, teacher)
        return 1.0 - F.cosine_similarity(student, teacher, dim=1)
