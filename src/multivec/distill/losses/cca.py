"""Contextual loss L_C as CCA over the batch (Burian 2023, §4.3.2 Definitions 1-2, eq. 4.2-4.3).

For a batch X [n, d1] and Y [n, d2]: centre both, ``S11 = X'X/(n-1) + r I``, ``S22 = Y'Y/(n-1) + r I``,
``S12 = X'Y/(n-1)`` (r = 1e-3), ``T = S11^{-1/2} S12 S22^{-1/2}``. The canonical correlations are the singular
values of T, i.e. the square roots of the eigenvalues of ``T'T`` (eigen-decomposition, ``eigvalsh``). The loss
is the negative sum of all of them, or of the ``top_k`` largest.

Numerics: a batch smaller than the dimension leaves S11 with a repeated eigenvalue r, where the backward
pass of a full ``eigh`` divides by eigenvalue gaps of 0 (NaN gradients). So the whitening uses Cholesky
factors instead of ``S^{-1/2}`` (``L1^{-1} S12 L2^{-T}`` differs from T by orthogonal factors only: the same
singular values), and only eigenvalues are differentiated (``eigvalsh``, stable with repeated values).
"""

from __future__ import annotations

import torch
from torch import nn

EIGEN_FLOOR = 1e-9  # eigenvalues are clamped here before square roots (finite gradients)


def whitened_cross_covariance(s11: torch.Tensor, s12: torch.Tensor, s22: torch.Tensor) -> torch.Tensor:
    """``L1^{-1} S12 L2^{-T}`` with ``S = L L'`` (Cholesky): the singular values of S11^{-1/2} S12 S22^{-1/2}."""
    l1 = torch.linalg.cholesky(s11)
    l2 = torch.linalg.cholesky(s22)
    left = torch.linalg.solve_triangular(l1, s12, upper=False)  # L1^{-1} S12
    return torch.linalg.solve_triangular(l2, left.T, upper=False).T  # (L2^{-1} (L1^{-1} S12)')'


def canonical_correlations(x: torch.Tensor, y: torch.Tensor, regularization: float = 1e-3) -> torch.Tensor:
    """All min(d1, d2) canonical correlations of the batch, largest first (computed in float64)."""
    if x.ndim != 2 or y.ndim != 2 or x.shape[0] != y.shape[0]:
        raise ValueError(f"CCA: inputs must be [batch, dim] with the same batch, got {tuple(x.shape)} "
                         f"and {tuple(y.shape)}")
    n = x.shape[0]
    if n < 2:
        raise ValueError("CCA needs at least 2 documents in a batch")
    x, y = x.double(), y.double()
    x = x - x.mean(dim=0, keepdim=True)
    y = y - y.mean(dim=0, keepdim=True)
    eye1 = torch.eye(x.shape[1], dtype=x.dtype, device=x.device)
    eye2 = torch.eye(y.shape[1], dtype=y.dtype, device=y.device)
    s11 = x.T @ x / (n - 1) + regularization * eye1
    s22 = y.T @ y / (n - 1) + regularization * eye2
    s12 = x.T @ y / (n - 1)
    t = whitened_cross_covariance(s11, s12, s22)
    small = t.T @ t if t.shape[1] <= t.shape[0] else t @ t.T
    values = torch.linalg.eigvalsh(small).flip(0)
    return values.clamp_min(EIGEN_FLOOR).sqrt()


class CCALoss(nn.Module):
    """``-sum`` of the (top-k) canonical correlations between the student's and the teacher's batch."""

    def __init__(self, top_k: int | None = None, regularization: float = 1e-3):
        super().__init__()
        if top_k is not None and top_k < 1:
            raise ValueError(f"distill.loss.cca_top_k={top_k}: must be >= 1 or null")
        self.top_k, self.regularization = top_k, regularization

    def forward(self, student: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
        correlations = canonical_correlations(student, teacher, self.regularization)
        if self.top_k is not None:
            correlations = correlations[: self.top_k]
        return (-correlations.sum()).to(student.dtype)
