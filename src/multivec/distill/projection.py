"""Projection heads of the student and of the contextual teacher (Burian 2023, §3.1 and the authors' final
configs: student 768→768→4096→2048 with ReLU against the 2048-d PV, or 768→768→1024→768 with a linear
100→768 projection of the contextual teacher).

A head is a list of layer widths after the input: ``[768, 4096, 2048]`` on a 768-d input is
Linear(768, 768) → ReLU → Linear(768, 4096) → ReLU → Linear(4096, 2048); no activation after the last
layer; ``[]`` is the identity. ``initialise_structural_head`` starts a one-Linear structural head at the
ridge least-squares map from the untrained student's embeddings to the structural teacher's (a random
Linear 384 -> 768 lowered the untrained Lee Pearson from 0.656 to 0.614 before any training), or at the
orthogonal Procrustes map between them (Schönemann 1966), which keeps the student's geometry.
``initialise_contextual_heads`` starts one-Linear SoftCCA heads at the ridge-regularised linear CCA of the
untrained student's and the contextual teacher's embeddings (Burian 2023, §4.3.2, Definition 2: the top-k
canonical directions, each variate centred and of unit variance), so L_C's first gradients reach the backbone
through projections that already correlate instead of through random ones.
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


def single_linear(head: nn.Module) -> nn.Linear | None:
    """The head's only layer when it is one Linear (bare or the single module of a Sequential), else None."""
    if isinstance(head, nn.Linear):
        return head
    if isinstance(head, nn.Sequential) and len(head) == 1 and isinstance(head[0], nn.Linear):
        return head[0]
    return None


def _set_linear(layer: nn.Linear, weight, bias) -> None:
    """Write ``x @ weight + bias`` (numpy, weight [d_in, d_out]) into ``layer``."""
    import torch

    with torch.no_grad():
        layer.weight.copy_(torch.from_numpy(weight.T.copy()).to(layer.weight.dtype))
        layer.bias.copy_(torch.from_numpy(bias.copy()).to(layer.bias.dtype))


def orthogonal_map(inputs, targets):
    """(W [d_in, d_out], zero bias): the orthogonal Procrustes solution (Schönemann 1966) between the unit-length
    rows, W = U V' from the (thin) SVD of X'T, so W has orthonormal rows when d_in <= d_out (an isometry; the
    demo's 384 -> 768) and orthonormal columns otherwise. Unlike the least-squares map
    it cannot fit a few hundred documents exactly: cos(x W, t) = cos(x, t W') keeps the student's own geometry,
    so L_S through a fixed W pulls the student's embedding towards the teacher's, projected into its space."""
    import numpy as np

    x = np.asarray(inputs, dtype=np.float64)
    t = np.asarray(targets, dtype=np.float64)
    if x.ndim != 2 or t.ndim != 2 or x.shape[0] != t.shape[0] or x.shape[0] < 2:
        raise ValueError(f"orthogonal_map: inputs {x.shape} and targets {t.shape} need the same >= 2 rows")
    x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    t = t / np.maximum(np.linalg.norm(t, axis=1, keepdims=True), 1e-12)
    u, _, vt = np.linalg.svd(x.T @ t, full_matrices=False)
    return u @ vt, np.zeros(t.shape[1])


STRUCTURAL_MAPS = {"lstsq": least_squares_map, "procrustes": orthogonal_map}


def initialise_structural_head(head: nn.Module, student_embeddings, teacher_embeddings,
                               method: str = "lstsq") -> dict | None:
    """Start a single-Linear structural head at the least-squares map (``lstsq``) or the orthogonal Procrustes
    map (``procrustes``) from the untrained student's embeddings of the training documents to the structural
    teacher's (so the first steps' L_S gradients reach the backbone through a head that already fits, instead
    of through random weights). A deeper head or the identity keeps its own start (None is returned); else the
    fit's mean cosine to the teacher is returned, and for ``lstsq`` its R^2 (the Procrustes map keeps the
    student's norms, so its R^2 says nothing)."""
    import numpy as np

    if method not in STRUCTURAL_MAPS:
        raise ValueError(f"structural head start {method!r}: expected one of {', '.join(STRUCTURAL_MAPS)}")
    layer = single_linear(head)
    if layer is None:
        return None
    weight, bias = STRUCTURAL_MAPS[method](student_embeddings, teacher_embeddings)
    if tuple(layer.weight.shape) != (weight.shape[1], weight.shape[0]):
        raise ValueError(f"structural head {tuple(layer.weight.shape)} does not map {weight.shape[0]} -> "
                         f"{weight.shape[1]} dimensions")
    _set_linear(layer, weight, bias)
    fitted = np.asarray(student_embeddings, dtype=np.float64) @ weight + bias
    target = np.asarray(teacher_embeddings, dtype=np.float64)
    residual = ((fitted - target) ** 2).sum()
    total = ((target - target.mean(axis=0)) ** 2).sum()
    cosine = (fitted * target).sum(axis=1) / (np.linalg.norm(fitted, axis=1) * np.linalg.norm(target, axis=1) + 1e-12)
    start = {"init": method, "mean_cosine": round(float(cosine.mean()), 4)}
    if method == "lstsq":
        start["r2"] = round(float(1 - residual / max(total, 1e-12)), 4)
    return start


def canonical_correlation_maps(view1, view2, k: int, ridge: float = LSTSQ_RIDGE):
    """Ridge-regularised linear CCA (float64): ``(A [d1, k], a [k], B [d2, k], b [k], rho [k])`` such that
    ``view1 @ A + a`` and ``view2 @ B + b`` are centred, their i-th columns have unit (regularised) variance
    and correlation ``rho[i]``, and different columns are uncorrelated; ``rho`` is descending. Each view's
    covariance gets ``ridge`` x its mean eigenvalue on the diagonal (a few hundred documents, hundreds of
    dimensions: without it the in-sample correlations are all near 1)."""
    import numpy as np

    x = np.asarray(view1, dtype=np.float64)
    y = np.asarray(view2, dtype=np.float64)
    if x.ndim != 2 or y.ndim != 2 or x.shape[0] != y.shape[0] or x.shape[0] < 2:
        raise ValueError(f"canonical_correlation_maps: views {x.shape} and {y.shape} need the same >= 2 rows")
    if not 1 <= k <= min(x.shape[1], y.shape[1]):
        raise ValueError(f"canonical_correlation_maps: k={k} must be in [1, {min(x.shape[1], y.shape[1])}] "
                         f"(the smaller view's dimension)")
    x_mean, y_mean = x.mean(axis=0), y.mean(axis=0)
    xc, yc = x - x_mean, y - y_mean
    n = x.shape[0]

    def inverse_root(centred):
        cov = centred.T @ centred / (n - 1)
        cov += ridge * max(np.trace(cov) / cov.shape[0], 1e-12) * np.eye(cov.shape[0])
        values, vectors = np.linalg.eigh(cov)
        return (vectors / np.sqrt(values)) @ vectors.T

    wx, wy = inverse_root(xc), inverse_root(yc)
    u, rho, vt = np.linalg.svd(wx @ (xc.T @ yc / (n - 1)) @ wy)
    a, b = wx @ u[:, :k], wy @ vt.T[:, :k]
    return a, -x_mean @ a, b, -y_mean @ b, rho[:k]


def initialise_contextual_heads(student_head: nn.Module, teacher_head: nn.Module, student_embeddings,
                                teacher_embeddings) -> dict | None:
    """Start the student-side and teacher-side SoftCCA heads, each a single Linear to k dimensions, at the
    linear CCA of the two views (``canonical_correlation_maps``). Deeper heads keep their own start (None is
    returned); else the k in-sample canonical correlations' mean, first and last are returned."""
    student_linear, teacher_linear = single_linear(student_head), single_linear(teacher_head)
    if student_linear is None or teacher_linear is None:
        return None
    k = student_linear.out_features
    if teacher_linear.out_features != k:
        raise ValueError(f"contextual heads end at {k} and {teacher_linear.out_features} dimensions; CCA needs one k")
    a, a0, b, b0, rho = canonical_correlation_maps(student_embeddings, teacher_embeddings, k)
    for layer, weight, bias in ((student_linear, a, a0), (teacher_linear, b, b0)):
        if layer.in_features != weight.shape[0]:
            raise ValueError(f"contextual head reads {layer.in_features} dimensions, its view has {weight.shape[0]}")
        _set_linear(layer, weight, bias)
    return {"init": "cca", "k": int(k), "mean_correlation": round(float(rho.mean()), 4),
            "first_correlation": round(float(rho[0]), 4), "last_correlation": round(float(rho[-1]), 4)}
