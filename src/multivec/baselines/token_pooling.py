"""Token pooling: a ColBERT-style document's token vectors reduced by hierarchical clustering.

Clavié, Chaffin & Adams (2024), "Reducing the Footprint of Multi-Vector Retrieval with Minimal
Performance Impact via Token Pooling" (arXiv:2409.14683), as PyLate ships it (``pool_factor``): the
tokens of a document are clustered bottom-up with Ward's criterion over cosine distances, and each
cluster becomes the mean of its members. It is what practitioners use today to shrink a multi-vector
index, and the baseline NUGGET's rows are compared with here: the untrained base encoder's
last-layer token states (the ColBART row's vectors), pooled to the same number of vectors per
document as NUGGET keeps at ratio r, k = ceil(n·r) of the n token states (``nugget_counts``), and
scored with the same MaxSim-mean (eq. 10) over the same candidates.

What is clustered, as in PyLate: the token vectors are L2-normalised, their cosine-distance matrix
``D = 1 - X Xᵀ`` is formed, and Ward linkage (``scipy.cluster.hierarchy.linkage``) runs on the rows of
``D`` as observations (each token described by its distances to every token of the document). The
dendrogram is cut into exactly k clusters (``fcluster(maxclust)`` as PyLate, and ``cut_tree`` where
tied merge heights leave fewer); one tree serves every ratio (``pool_documents_at``). Each pooled vector is the mean of its cluster's normalised vectors;
clusters are ordered by their first token. Unlike PyLate, no token is protected from pooling (PyLate
keeps the first, its [D] marker, outside the count): k counts every vector, as NUGGET's k does.
With k = n nothing is merged and the unpooled vectors come back in their order.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np


def nugget_counts(n: int, ratio: float) -> int:
    """k = ceil(n·r), at least 1 and at most n: NUGGET's number of nuggets for n tokens
    (``multivec.nugget.selection``, the same epsilon against float error)."""
    if n < 1:
        raise ValueError(f"a document with {n} token vectors cannot be pooled")
    if not 0 < ratio <= 1:
        raise ValueError(f"ratio {ratio!r}: expected 0 < r <= 1")
    return min(max(math.ceil(n * ratio - 1e-9), 1), n)


def ward_tree(vectors: np.ndarray) -> np.ndarray:
    """Ward linkage (scipy's matrix) over the rows of the cosine-distance matrix of ``vectors`` (n >= 2).
    The tree does not depend on k: one tree serves every ratio."""
    import warnings

    from scipy.cluster.hierarchy import ClusterWarning, linkage

    unit = _normalise(vectors)
    with warnings.catch_warnings():
        # The distance matrix's rows ARE the observations here (PyLate's recipe), which scipy's heuristic
        # for a mistaken square distance matrix flags on symmetric inputs; nothing else is filtered.
        warnings.simplefilter("ignore", ClusterWarning)
        return linkage(1.0 - unit @ unit.T, method="ward")


def cluster_labels(vectors: np.ndarray, k: int, tree: np.ndarray | None = None) -> np.ndarray:
    """Cluster id (0..k-1, numbered by first member) of each of the n rows of ``vectors``: the Ward tree
    (``ward_tree``, or ``tree`` when given) cut into exactly k clusters."""
    from scipy.cluster.hierarchy import cut_tree, fcluster

    n = len(vectors)
    if not 1 <= k <= n:
        raise ValueError(f"k = {k} clusters of {n} vectors: expected 1 <= k <= n")
    if k == n:
        return np.arange(n)
    if k == 1:
        return np.zeros(n, dtype=np.int64)
    tree = ward_tree(vectors) if tree is None else tree
    raw = fcluster(tree, t=k, criterion="maxclust")
    if len(np.unique(raw)) != k:  # tied merge heights: fcluster stops short; cut_tree cuts exactly
        raw = cut_tree(tree, n_clusters=k).reshape(-1)
    _, first = np.unique(raw, return_index=True)
    rank = {label: r for r, label in enumerate(raw[np.sort(first)])}
    labels = np.array([rank[label] for label in raw], dtype=np.int64)
    if len(rank) != k:
        raise RuntimeError(f"the Ward tree was cut into {len(rank)} clusters, not {k}")
    return labels


def pool_tokens(vectors: np.ndarray, k: int, tree: np.ndarray | None = None) -> np.ndarray:
    """The (k × d) pooled vectors of one document's (n × d) token vectors: the mean of each cluster's
    L2-normalised members (``cluster_labels``). k = n returns the vectors unchanged."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2:
        raise ValueError(f"expected an (n × d) array of token vectors, got shape {vectors.shape}")
    if k == len(vectors):
        return vectors.copy()
    labels = cluster_labels(vectors, k, tree)
    unit = _normalise(vectors)
    pooled = np.zeros((k, vectors.shape[1]), dtype=np.float64)
    np.add.at(pooled, labels, unit)
    pooled /= np.bincount(labels, minlength=k)[:, None]
    return pooled.astype(np.float32)


def pool_documents(documents: Sequence[np.ndarray], ratio: float) -> list[np.ndarray]:
    """Every document's token vectors pooled to k = ceil(n·r) vectors (``nugget_counts``)."""
    return pool_documents_at(documents, [ratio])[ratio]


def pool_documents_at(documents: Sequence[np.ndarray], ratios: Sequence[float]) -> dict[float, list[np.ndarray]]:
    """``pool_documents`` at several ratios, one Ward tree per document for all of them."""
    out: dict[float, list[np.ndarray]] = {r: [] for r in ratios}
    for vectors in documents:
        counts = {r: nugget_counts(len(vectors), r) for r in ratios}
        tree = ward_tree(vectors) if any(1 < k < len(vectors) for k in counts.values()) else None
        for r, k in counts.items():
            out[r].append(pool_tokens(vectors, k, tree))
    return out


def _normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float64)
