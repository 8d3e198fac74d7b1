"""The distillation losses of Burian (2023), one module each (thesis §3.1 eq. 3.1, §4.3.2).

Structural losses (student vs the structural teacher, per document, so that the length mask of eq. 3.1
can weight each document): ``mse``, ``cosine``, ``max_marginals``. Contextual losses (student vs the
contextual teacher, over the whole batch): ``cca``, ``soft_cca``, ``dcca``.
``structural_loss(name, ...)`` and ``contextual_loss(name, ...)`` build them by their config names.
"""

from __future__ import annotations

from torch import nn

from multivec.distill.losses.cca import CCALoss
from multivec.distill.losses.cosine import CosineDistanceLoss
from multivec.distill.losses.dcca import DCCALoss
from multivec.distill.losses.max_marginals import MaxMarginalsLoss
from multivec.distill.losses.mse import MSELoss
from multivec.distill.losses.soft_cca import SoftCCALoss, StochasticDecorrelationLoss

STRUCTURAL_LOSSES = ("mse", "cosine", "max_marginals")
CONTEXTUAL_LOSSES = ("cca", "soft_cca", "dcca")

__all__ = ["CCALoss", "CONTEXTUAL_LOSSES", "CosineDistanceLoss", "DCCALoss", "MSELoss", "MaxMarginalsLoss",
           "STRUCTURAL_LOSSES", "SoftCCALoss", "StochasticDecorrelationLoss", "contextual_loss", "structural_loss"]


def structural_loss(name: str, *, gamma: float = 1.0, distance: str = "cosine") -> nn.Module:
    """A per-document structural loss ``(y_student [B, d], y_teacher [B, d]) -> [B]``."""
    if name == "mse":
        return MSELoss()
    if name == "cosine":
        return CosineDistanceLoss()
    if name == "max_marginals":
        return MaxMarginalsLoss(gamma=gamma, distance=distance)
    raise ValueError(f"distill.loss.structural={name!r}: expected one of {', '.join(STRUCTURAL_LOSSES)}")


def contextual_loss(name: str, *, dim: int, top_k: int | None = None, regularization: float = 1e-3,
                    delta: float = 0.03, alpha: float = 0.95, normalise: bool = True) -> nn.Module:
    """A batch-level contextual loss ``(student projection [B, k], teacher projection [B, k']) -> scalar``.
    ``dim``: the projections' width (SoftCCA's running covariances have that size)."""
    if name == "cca":
        return CCALoss(top_k=top_k, regularization=regularization)
    if name == "dcca":
        return DCCALoss(top_k=top_k, regularization=regularization)
    if name == "soft_cca":
        return SoftCCALoss(dim, delta=delta, alpha=alpha, normalise=normalise)
    raise ValueError(f"distill.loss.contextual={name!r}: expected one of {', '.join(CONTEXTUAL_LOSSES)}")
