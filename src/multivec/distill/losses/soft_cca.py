"""Contextual loss L_C as SoftCCA (Burian 2023, §4.3.2 "Soft CCA", eq. 4.9-4.10; Chang et al. 2018):
``MSE(P1, P2) + delta * (SDL(P1) + SDL(P2))``, delta = 0.03.

The stochastic decorrelation loss (SDL) of a projection batch P [n, k]: batch-normalise it (no affine,
biased variance) to Z, take the mini-batch covariance ``C_mini = Z'Z / n``, update the running covariance
``C_t = alpha * sg(C_{t-1}) + C_mini`` and its normaliser ``c_t = alpha * c_{t-1} + 1`` (C_0 = 0, c_0 = 0,
alpha = 0.95, sg = stop-gradient), and return ``sum_{i != j} |C_t / c_t|_ij``, divided by the k^2 - k
off-diagonal entries when ``normalise`` (the authors' code: "mean instead of sum"; the default) or not
(the thesis's eq. 4.10 and Chang et al.'s sum). The running state is a buffer of the module, so it is saved
and restored with the model's weights (exact resumption). ``last_terms`` holds the last call's parts
(``soft_cca_mse``, ``sdl_student``, ``sdl_teacher``, the SDLs before delta) for the training metrics.
"""

from __future__ import annotations

import torch
from torch import nn

BATCH_NORM_EPS = 1e-5


class StochasticDecorrelationLoss(nn.Module):
    def __init__(self, dim: int, alpha: float = 0.95, normalise: bool = True):
        super().__init__()
        if not 0 <= alpha < 1:
            raise ValueError(f"distill.loss.sdl_alpha={alpha}: must be in [0, 1)")
        self.alpha, self.normalise = alpha, normalise
        self.register_buffer("running_covariance", torch.zeros(dim, dim))
        self.register_buffer("normaliser", torch.zeros(()))

    def forward(self, projection: torch.Tensor) -> torch.Tensor:
        if projection.ndim != 2 or projection.shape[1] != self.running_covariance.shape[0]:
            raise ValueError(f"SDL: expected [batch, {self.running_covariance.shape[0]}], "
                             f"got {tuple(projection.shape)}")
        n = projection.shape[0]
        if n < 2:
            raise ValueError("SDL needs at least 2 documents in a batch")
        p = projection.float()
        z = (p - p.mean(dim=0)) / torch.sqrt(p.var(dim=0, unbiased=False) + BATCH_NORM_EPS)
        mini = z.T @ z / n
        covariance = self.alpha * self.running_covariance + mini
        normaliser = self.alpha * self.normaliser + 1.0
        if self.training:
            self.running_covariance.copy_(covariance.detach())
            self.normaliser.copy_(normaliser)
        approx = covariance / normaliser
        off_diagonal = approx.abs().sum() - approx.diagonal().abs().sum()
        k = approx.shape[0]
        return off_diagonal / (k * k - k) if self.normalise and k > 1 else off_diagonal


class SoftCCALoss(nn.Module):
    projects_teacher = True  # both sides pass through projection heads (DistillModel reads this)

    def __init__(self, dim: int, delta: float = 0.03, alpha: float = 0.95, normalise: bool = True):
        super().__init__()
        self.delta = delta
        self.sdl_student = StochasticDecorrelationLoss(dim, alpha, normalise)
        self.sdl_teacher = StochasticDecorrelationLoss(dim, alpha, normalise)
        self.last_terms: dict[str, float] = {}

    def forward(self, student: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
        if student.shape != teacher.shape:
            raise ValueError(f"SoftCCA: the two projections must have the same shape, got "
                             f"{tuple(student.shape)} and {tuple(teacher.shape)}")
        mse = (student.float() - teacher.float()).pow(2).mean()
        sdl_student, sdl_teacher = self.sdl_student(student), self.sdl_teacher(teacher)
        self.last_terms = {"soft_cca_mse": float(mse.detach()), "sdl_student": float(sdl_student.detach()),
                           "sdl_teacher": float(sdl_teacher.detach())}
        return mse + self.delta * (sdl_student + sdl_teacher)
