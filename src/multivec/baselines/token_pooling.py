"""Token pooling: a ColBERT-style document's token vectors reduced by hierarchical clustering.

Clavié, Chaffin & Adams (2024), "Reducing the Footprint of Multi-Vector Retrieval with Minimal
Performance Impact via Token Pooling" (arXiv:2409.14683), as PyLate ships it (``pool_factor``): the
tokens of a document are clustered bottom-up with Ward's criterion over cosine distances, and each
cluster becomes the mean of its members. It is what practitioners use today to shrink a multi-vector
index, and the baseline NUGGET's rows are compared with here (issue 18): the untrained base encoder's
last-layer token states (the ColBART row's vectors), pooled to the same number of vectors per
document as NUGGET keeps at ratio r, k = ceil(n·r) of the n token states (``nugget_counts``), and
scored with the same MaxSim-mean (eq. 10) over the same candidates.

What is clustered, as in PyLate: the token vectors are L2-normalised, their cosine-distance matrix
``D = 1 - X Xᵀ`` is formed, and Ward linkage (``scipy.cluster.hierarchy.linkage``) runs on the rows of
``D`` as observations (each token described by its distances to every token of the document). The
dendrogram is cut into exactly k clusters (``cut_tree``; PyLate's ``fcluster(maxclust)`` may return
fewer when merge heights tie). Each pooled vector is the mean of its cluster's normalised vectors;
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


def cluster_labels(vectors: np.ndarray, k: int) -> np.ndarray:
    """Cluster id (0..k-1, numbered by first member) of each of the n rows of ``vectors``: Ward linkage over
    the rows of the cosine-distance matrix, cut into exactly k clusters."""
    from scipy.cluster.hierarchy import cut_tree, linkage

    n = len(vectors)
    if not 1 <= k <= n:
        raise ValueError(f"k = {k} clusters of {n} vectors: expected 1 <= k <= n")
    if k == n:
        return np.arange(n)
    if k == 1:
        return np.zeros(n, dtype=np.int64)
    unit = _normalise(vectors)
    distances = 1.0 - unit @ unit.T
    tree = linkage(distances.astype(np.float64), method="ward")
    raw = cut_tree(tree, n_clusters=k).reshape(-1)
    first_seen = {label: i for i, label in reversed(list(enumerate(raw)))}
    order = {label: rank for rank, label in enumerate(sorted(first_seen, key=first_seen.get))}
    labels = np.array([order[label] for label in raw], dtype=np.int64)
    if len(order) != k:
        raise RuntimeError(f"cut_tree gave {len(order)} clusters, not {k}")
    return labels


def pool_tokens(vectors: np.ndarray, k: int) -> np.ndarray:
    """The (k × d) pooled vectors of one document's (n × d) token vectors: the mean of each cluster's
    L2-normalised members (``cluster_labels``). k = n returns the vectors unchanged."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2:
        raise ValueError(f"expected an (n × d) array of token vectors, got shape {vectors.shape}")
    if k == len(vectors):
        return vectors.copy()
    labels = cluster_labels(vectors, k)
    unit = _normalise(vectors)
    pooled = np.zeros((k, vectors.shape[1]), dtype=np.float64)
    np.add.at(pooled, labels, unit)
    pooled /= np.bincount(labels, minlength=k)[:, None]
    return pooled.astype(np.float32)


def pool_documents(documents: Sequence[np.ndarray], ratio: float) -> list[np.ndarray]:
    """Every document's token vectors pooled to k = ceil(n·r) vectors (``nugget_counts``)."""
    return [pool_tokens(v, nugget_counts(len(v), ratio)) for v in documents]


def _normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float64)
