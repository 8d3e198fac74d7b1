"""Combining the structural and contextual losses (Burian 2023, §3.1 eq. 3.1) with the length mask.

``mask_i`` is 1 for a document whose structural-teacher input fits its limit (<= 384 teacher tokens), else 0;
L_S,i is the per-document structural loss and L_C the batch's contextual loss. Named options:

- ``eq_3_1``: eq. 3.1 as printed (its typo fixed: L_C compares with the contextual teacher),
  ``mean_i(lambda * mask_i * L_S,i) + L_C``;
- ``convex`` (the authors' later code): ``mean_i(lambda * mask_i * L_S,i + (1 - lambda * mask_i) * L_C)``;
- ``unweighted``: ``mean_i(mask_i * L_S,i) + L_C``;
- ``authors`` (the default: the authors' final ``StructuralContextualHead``): L_S is the masked mean
  ``Lbar_S = sum_i(mask_i * L_S,i) / sum_i(mask_i)`` (0 when no document of the batch is inside the mask), and
  ``lambda = 0.5`` means no weighting, ``Lbar_S + L_C``; any other lambda weights each document,
  ``mean_i(lambda * mask_i * Lbar_S + (1 - lambda * mask_i) * L_C)``.

A missing side (``None``: a run with L_S only or L_C only) contributes nothing, and the other is taken
unweighted (``mean_i(mask_i * L_S,i)`` or ``L_C``; ``authors``: ``Lbar_S`` and ``L_C``, or when lambda is not
0.5 ``mean_i(lambda * mask_i) * Lbar_S`` and ``(1 - lambda) * L_C``, as the authors' code).
"""

from __future__ import annotations

import torch

COMBINATIONS = ("authors", "eq_3_1", "convex", "unweighted")
AUTHORS_NO_WEIGHTING = 0.5  # the authors' code: ``weighting = self._lam != 0.5``


def combine_losses(structural: torch.Tensor | None, contextual: torch.Tensor | None, mask: torch.Tensor, *,
                   option: str, lam: float) -> torch.Tensor:
    """``structural``: [B] per-document L_S (or None); ``contextual``: scalar L_C (or None); ``mask``: [B]."""
    if option not in COMBINATIONS:
        raise ValueError(f"distill.loss.combination={option!r}: expected one of {', '.join(COMBINATIONS)}")
    if structural is None and contextual is None:
        raise ValueError("combine_losses: neither a structural nor a contextual loss")
    mask = mask.to(structural.dtype if structural is not None else contextual.dtype)
    if structural is not None and structural.shape != mask.shape:
        raise ValueError(f"combine_losses: structural loss {tuple(structural.shape)} and mask "
                         f"{tuple(mask.shape)} differ")
    if option == "authors":
        return _authors(structural, contextual, mask, lam)
    if contextual is None:
        return (mask * structural).mean()
    if structural is None:
        return contextual
    if option == "eq_3_1":
        return (lam * mask * structural).mean() + contextual
    if option == "convex":
        weight = lam * mask
        return (weight * structural + (1.0 - weight) * contextual).mean()
    return (mask * structural).mean() + contextual


def _authors(structural: torch.Tensor | None, contextual: torch.Tensor | None, mask: torch.Tensor,
             lam: float) -> torch.Tensor:
    """The authors' final combination (module docstring, ``authors``)."""
    weighting = lam != AUTHORS_NO_WEIGHTING
    total = None
    if structural is not None:
        kept = mask.sum()
        masked_mean = (mask * structural).sum() / kept if kept > 0 else (0.0 * structural).sum()
        total = (lam * mask).mean() * masked_mean if weighting else masked_mean
    if contextual is not None:
        # the authors' lams: lambda * mask, or lambda for every document in a run without L_S
        lams = lam * mask if structural is not None else torch.full_like(mask, lam)
        part = (1.0 - lams).mean() * contextual if weighting else contextual
        total = part if total is None else total + part
    return total
