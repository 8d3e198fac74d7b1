"""Projection heads of the student and of the contextual teacher (Burian 2023, §3.1 and the authors' final
configs: student 768→768→4096→2048 with ReLU against the 2048-d PV, or 768→768→1024→768 with a linear
100→768 projection of the contextual teacher).

A head is a list of layer widths after the input: ``[768, 4096, 2048]`` on a 768-d input is
Linear(768, 768) → ReLU → Linear(768, 4096) → ReLU → Linear(4096, 2048); no activation after the last
layer; ``[]`` is the identity. ``initialise_structural_head`` starts a one-Linear structural head at the
ridge least-squares map from the untrained student's embeddings to the structural teacher's (issue 19: a random
Linear 384 -> 768 lowered the untrained Lee Pearson from 0.656 to 0.614 before any training).
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


LSTSQ_RIDGE = 1e-3  # ridge penalty relative to the mean eigenvalue of X'X (a few hundred documents, 385 inputs)


def least_squares_map(inputs, targets, ridge: float = LSTSQ_RIDGE):
    """(W [d_in, d_out], b [d_out]) minimising ``|X W + b - T|^2 + r |W|^2`` over the rows (float64; the
    intercept unpenalised, ``r`` = ``ridge`` x the mean eigenvalue of the centred X'X)."""
    import numpy as np

    x = np.asarray(inputs, dtype=np.float64)
    t = np.asarray(targets, dtype=np.float64)
    if x.ndim != 2 or t.ndim != 2 or x.shape[0] != t.shape[0] or x.shape[0] < 2:
        raise ValueError(f"least_squares_map: inputs {x.shape} and targets {t.shape} need the same >= 2 rows")
    x_mean, t_mean = x.mean(axis=0), t.mean(axis=0)
    xc, tc = x - x_mean, t - t_mean
    gram = xc.T @ xc
    penalty = ridge * max(np.trace(gram) / gram.shape[0], 1e-12)
    weight = np.linalg.solve(gram + penalty * np.eye(gram.shape[0]), xc.T @ tc)
    return weight, t_mean - x_mean @ weight


def initialise_structural_head(head: nn.Module, student_embeddings, teacher_embeddings) -> dict | None:
    """Start a single-Linear structural head at the least-squares map from the untrained student's embeddings
    of the training documents to the structural teacher's (so the first steps' L_S gradients reach the backbone
    through a head that already fits, instead of through random weights). A deeper head or the identity keeps
    its own start (None is returned); else the fit's R^2 and cosine to the teacher are returned."""
    import numpy as np
    import torch

    linears = [m for m in head.modules() if isinstance(m, nn.Linear)]
    if len(linears) != 1 or not isinstance(head, (nn.Linear, nn.Sequential)) or \
            (isinstance(head, nn.Sequential) and len(head) != 1):
        return None
    weight, bias = least_squares_map(student_embeddings, teacher_embeddings)
    layer = linears[0]
    if tuple(layer.weight.shape) != (weight.shape[1], weight.shape[0]):
        raise ValueError(f"structural head {tuple(layer.weight.shape)} does not map {weight.shape[0]} -> "
                         f"{weight.shape[1]} dimensions")
    with torch.no_grad():
        layer.weight.copy_(torch.from_numpy(weight.T.copy()).to(layer.weight.dtype))
        layer.bias.copy_(torch.from_numpy(bias).to(layer.bias.dtype))
    fitted = np.asarray(student_embeddings, dtype=np.float64) @ weight + bias
    target = np.asarray(teacher_embeddings, dtype=np.float64)
    residual = ((fitted - target) ** 2).sum()
    total = ((target - target.mean(axis=0)) ** 2).sum()
    cosine = (fitted * target).sum(axis=1) / (np.linalg.norm(fitted, axis=1) * np.linalg.norm(target, axis=1) + 1e-12)
    return {"init": "lstsq", "r2": round(float(1 - residual / max(total, 1e-12)), 4),
            "mean_cosine": round(float(cosine.mean()), 4)}
