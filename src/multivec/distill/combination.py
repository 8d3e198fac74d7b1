"""Combining the structural and contextual losses (Burian 2023, §3.1 eq. 3.1) with the length mask.

``mask_i`` is 1 for a document whose structural-teacher input fits its limit (<= 384 teacher tokens), else 0;
L_S,i is the per-document structural loss and L_C the batch's contextual loss. Named options:

- ``eq_3_1``: eq. 3.1 as printed (its typo fixed: L_C compares with the contextual teacher),
  ``mean_i(lambda * mask_i * L_S,i) + L_C``;
- ``convex`` (the authors' later code): ``mean_i(lambda * mask_i * L_S,i + (1 - lambda * mask_i) * L_C)``;
- ``unweighted`` (the authors' last code, lambda = 0.5 read as "no weighting"): ``mean_i(mask_i * L_S,i) + L_C``.

A missing side (``None``: a run with L_S only or L_C only) contributes nothing, and the other is taken
unweighted (``mean_i(mask_i * L_S,i)`` or ``L_C``).
"""

from __future__ import annotations

import torch

COMBINATIONS = ("eq_3_1", "convex", "unweighted")


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
