"""The token pooling rows (``multivec.baselines.token_pooling``) as a sentence-transformers ``MultiVectorEncoder``
with the library's own ``HierarchicalTokenPooling``, and what differs between the two poolings.

``export_token_pooling(encoder, dest, ratio)`` writes ``Transformer`` (the untrained base encoder, whole documents
up to its position limit, as the baseline encodes) → ``Normalize`` (token level) → ``HierarchicalTokenPooling``
with the settings closest to the project's: ``pool_factor = 1 / r``, ``num_protected_tokens = 0`` (the project
protects no token: k counts every vector), ``normalize_embeddings = False`` (the project's pooled vectors are
means of unit vectors, not re-normalised) and ``tasks = ["query", "document"]`` (the project pools query and
candidate documents alike; the library's default pools documents only). It loads with
``MultiVectorEncoder(path)``, no remote code.

Differences that remain (each asserted by tests/test_interop_token_pooling.py on the same token vectors):

1. **k**: the project keeps k = ceil(n·r) vectors (``nugget_counts``, NUGGET's k); the library keeps
   max(floor(n / pool_factor), 1) with pool_factor = 1/r in floating point. They differ whenever n·r is not an
   integer, and even for some integer n·r (10 tokens at r = 0.3: 3 here, 2 there, since 10 / fl(1/0.3) is just
   below 3) (``library_count``).
2. **Linkage input**: the project runs Ward on the rows of the cosine-distance matrix as observations (PyLate
   <= 1.3.4's recipe); the library runs Ward on the condensed cosine distances (PyLate > 1.3.4). The trees, and so
   the clusters, can differ. With the same k and the condensed input, the project's recipe gives the library's
   vectors (``project_pool_condensed``), so the linkage input is the only other difference in the clusters.
3. **Order**: the project orders pooled vectors by each cluster's first token, the library by cluster label
   (MaxSim does not depend on the order; compare sorted rows).
4. **k = n** (nothing merged): the project returns the token states unchanged, the library the unit vectors
   (cosine and MaxSim-mean over unit vectors are the same).
5. **Exact distance ties**: the project cuts the tree into exactly k clusters (``cut_tree``); the library keeps
   fewer when ``fcluster`` stops short.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

USAGE = """from sentence_transformers import MultiVectorEncoder

model = MultiVectorEncoder("{dest}")
vectors = model.encode_document(["A first document.", "A second document."])  # pooled token vectors
print(model.similarity(vectors, vectors))  # meanmaxsim over unit vectors: the project's MaxSim-mean"""


def library_count(n: int, ratio: float, protected: int = 0) -> int:
    """How many vectors ``HierarchicalTokenPooling(pool_factor=1/ratio)`` keeps of n (floor, at least 1)."""
    return protected + max(int((n - protected) // (1.0 / ratio)), 1)


def library_pool(vectors: np.ndarray, k: int) -> np.ndarray:
    """The library's pooling of one document's unit-normalised vectors into exactly k clusters (pool_factor
    n / (k + 0.5), so floor(n / pool_factor) = k), no protected token, no re-normalisation."""
    import torch
    from sentence_transformers.multi_vector_encoder.modules import HierarchicalTokenPooling

    unit = _unit(vectors)
    n = len(unit)
    pooling = HierarchicalTokenPooling(pool_factor=max(1.0, n / (k + 0.5)), num_protected_tokens=0,
                                       normalize_embeddings=False)
    return pooling.pool_one(torch.from_numpy(unit.astype(np.float32))).numpy()


def project_pool_condensed(vectors: np.ndarray, k: int) -> np.ndarray:
    """The project's recipe (unit vectors, Ward, fcluster maxclust k, cluster means of unit vectors) with the
    library's linkage input: the condensed cosine distances instead of the distance matrix's rows."""
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    unit = _unit(vectors)
    if k >= len(unit):
        return unit.astype(np.float32)
    distances = np.clip(1.0 - unit.astype(np.float32) @ unit.astype(np.float32).T, 0, 2)
    labels = fcluster(linkage(squareform(distances, checks=False), method="ward"), t=k, criterion="maxclust")
    _, inverse = np.unique(labels, return_inverse=True)
    pooled = np.zeros((inverse.max() + 1, unit.shape[1]))
    np.add.at(pooled, inverse, unit)
    return (pooled / np.bincount(inverse)[:, None]).astype(np.float32)


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float64)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def sorted_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows in lexicographic order (to compare poolings whose cluster order differs)."""
    vectors = np.asarray(vectors)
    return vectors[np.lexsort(vectors.T[::-1])]


def export_token_pooling(encoder: str, dest: str | os.PathLike, ratio: float, *, max_tokens: int | None = None,
                         device: str = "cpu") -> dict[str, Any]:
    """Export the token pooling row of ``encoder`` (a model reference: ``minilm``, a folder, ``tiny-random-bert``)
    at ratio ``ratio`` to ``dest`` as a ``MultiVectorEncoder`` folder."""
    from sentence_transformers import MultiVectorEncoder
    from sentence_transformers.base.modules import Normalize
    from sentence_transformers.multi_vector_encoder.modules import HierarchicalTokenPooling

    from multivec.baselines.base_encoder import load_encoder
    from multivec.encodings import encoder_token_limit, resolve_max_tokens
    from multivec.interop.backbones import transformer_module
    from multivec.interop.model_card import write_model_card

    if not 0 < ratio <= 1:
        raise ValueError(f"ratio {ratio!r}: expected 0 < r <= 1")
    tokenizer, backbone = load_encoder(encoder)
    limit = resolve_max_tokens(max_tokens, encoder_token_limit(backbone.config))
    pooling = HierarchicalTokenPooling(pool_factor=1.0 / ratio, num_protected_tokens=0, normalize_embeddings=False,
                                       tasks=["query", "document"])
    dest = Path(dest)
    with transformer_module(backbone, tokenizer, limit) as transformer:
        st = MultiVectorEncoder(modules=[transformer, Normalize(module_input_name="token_embeddings"), pooling],
                                device=device, similarity_fn_name="meanmaxsim")
        st.save(str(dest))
    dim = int(backbone.config.hidden_size)
    cannot = [f"k = ceil(n r) (NUGGET's count, the project's): the library keeps floor(n / {1.0 / ratio:g}) "
              f"vectors, at least 1; for n = 15 at r = {ratio:g}: {library_count(15, ratio)} here, "
              f"{max(1, math.ceil(15 * ratio - 1e-9))} in the project.",
              "The project's Ward linkage on the rows of the cosine-distance matrix (PyLate <= 1.3.4): the library "
              "clusters the condensed distances (PyLate > 1.3.4); clusters can differ.",
              "Cluster order (the project's: by first token) and, when nothing is merged, the unnormalised token "
              "states the project returns: the library returns unit vectors. Neither changes MaxSim-mean scores."]
    write_model_card(
        dest, kind="token-pooling", title=f"Token pooling baseline (hierarchical, r = {ratio:g}) of the NUGGET "
                                          "reproduction",
        model_class="Multi-Vector Encoder (sentence_transformers.MultiVectorEncoder)", architecture=repr(st),
        max_seq_length=limit, dimension=dim, source=encoder, base_model=None if encoder.startswith("tiny-")
        else encoder, training_data="None: an untrained encoder's token states, pooled (no training).",
        configuration={"encoder": encoder, "ratio": ratio, "max_tokens": limit, "pool_factor": 1.0 / ratio,
                       "num_protected_tokens": 0, "normalize_embeddings": False, "tasks": ["query", "document"]},
        usage=USAGE.format(dest=dest), cannot_express=cannot, pipeline_tag="feature-extraction",
        extra_tags=["multi-vector", "token-pooling"])
    return {"kind": "token_pooling", "dest": str(dest), "modules": [type(m).__name__ for m in st],
            "trust_remote_code": False, "max_seq_length": limit, "dimension": dim, "ratio": ratio}
