"""Projection heads of the student and of the contextual teacher (Burian 2023, §3.1 and the authors' final
configs: student 768→768→4096→2048 with ReLU against the 2048-d PV, or 768→768→1024→768 with a linear
100→768 projection of the contextual teacher).

A head is a list of layer widths after the input: ``[768, 4096, 2048]`` on a 768-d input is
Linear(768, 768) → ReLU → Linear(768, 4096) → ReLU → Linear(4096, 2048); no activation after the last
layer; ``[]`` is the identity.
"""

from __future__ import annotations

from typing import Sequence

from torch import nn

ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU, "tanh": nn.Tanh}


def projection_head(input_dim: int, layers: Sequence[int], activation: str = "relu") -> nn.Module:
    if activation not in ACTIVATIONS:
        raise ValueError(f"projection activation {activation!r}: expected one of {', '.join(ACTIVATIONS)}")
    if any(int(width) < 1 for width in layers):
        raise ValueError(f"projection layers {list(layers)}: every width must be >= 1")
    modules: list[nn.Module] = []
    width = input_dim
    for position, out in enumerate(layers):
        modules.append(nn.Linear(width, int(out)))
        if position < len(layers) - 1:
            modules.append(ACTIVATIONS[activation]())
        width = int(out)
    return nn.Sequential(*modules) if modules else nn.Identity()


def output_dim(input_dim: int, layers: Sequence[int]) -> int:
    return int(layers[-1]) if layers else input_dim
