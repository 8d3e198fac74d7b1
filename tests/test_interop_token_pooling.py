"""The token pooling rows as a MultiVectorEncoder with the library's HierarchicalTokenPooling, compared with this
project's token pooling (multivec.baselines.token_pooling) on the same token vectors: each difference is named
and asserted (multivec.interop.token_pooling_export lists them)."""

from __future__ import annotations

import math
import os

import numpy as np
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _documents(count=20, seed=0, dim=16):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(int(rng.integers(8, 40)), dim)).astype(np.float32) for _ in range(count)]


def test_k_is_ceil_in_the_project_and_floor_in_the_library():
    from sentence_transformers.multi_vector_encoder.modules import HierarchicalTokenPooling

    from multivec.baselines.token_pooling import nugget_counts
    from multivec.interop.token_pooling_export import library_count

    differ = 0
    for n in range(1, 80):
        for ratio in (0.1, 0.25, 0.3, 0.5):
            ours, theirs = nugget_counts(n, ratio), library_count(n, ratio)
            assert ours == max(1, math.ceil(n * ratio - 1e-9))
            assert theirs == max(1, int(n // (1 / ratio)))  # floor of n / fl(1/r)
            assert theirs <= max(1, math.floor(n * ratio + 1e-9)) and ours - theirs in (0, 1)
            differ += ours != theirs
    assert differ > 0
    # Even an integer n·r can lose a vector to the float 1/r: 10 tokens at r = 0.3 keep 3 here, 2 there.
    assert nugget_counts(10, 0.3) == 3 and library_count(10, 0.3) == 2
    pooling = HierarchicalTokenPooling(pool_factor=1 / 0.25, num_protected_tokens=0, normalize_embeddings=False)
    for vectors in _documents():
        n = len(vectors)
        unit = torch.nn.functional.normalize(torch.from_numpy(vectors), dim=-1)
        assert len(pooling.pool_one(unit)) == library_count(n, 0.25)  # the library's own count, floor


def test_with_the_same_k_the_linkage_input_is_the_only_difference_in_the_clusters():
    from multivec.baselines.token_pooling import pool_tokens
    from multivec.interop.token_pooling_export import library_pool, project_pool_condensed, sorted_rows

    partitions_differ = 0
    for vectors in _documents():
        k = max(2, len(vectors) // 4)
        library = library_pool(vectors, k)
        assert len(library) == k
        # The project's recipe with the library's condensed linkage: the library's vectors, order aside.
        condensed = project_pool_condensed(vectors, k)
        assert np.abs(sorted_rows(library) - sorted_rows(condensed)).max() <= 1e-5
        # The project's own recipe clusters the rows of the distance matrix: a different tree, often.
        ours = pool_tokens(vectors, k)
        assert len(ours) == k
        same = ours.shape == library.shape and np.abs(sorted_rows(ours) - sorted_rows(library)).max() <= 1e-5
        partitions_differ += not same
    assert partitions_differ > 0
    print(f"\nsame k, project vs library: clusters differ in {partitions_differ} of 20 documents")


def test_order_unmerged_vectors_protected_tokens_and_query_pooling_differ_as_named():
    from sentence_transformers.multi_vector_encoder.modules import HierarchicalTokenPooling

    from multivec.baselines.token_pooling import pool_tokens
    from multivec.interop.token_pooling_export import library_pool

    vectors = _documents(1, seed=4)[0]
    n = len(vectors)
    # k = n: the project returns the token states unchanged, the library unit vectors (same cosine geometry).
    assert np.array_equal(pool_tokens(vectors, n), vectors)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    assert np.abs(library_pool(vectors, n) - unit).max() <= 1e-6
    # Order: the project numbers clusters by their first token (cluster 0 holds token 0).
    ours = pool_tokens(vectors, 4)
    from multivec.baselines.token_pooling import cluster_labels

    labels = cluster_labels(vectors, 4)
    assert labels[0] == 0 and list(dict.fromkeys(labels)) == [0, 1, 2, 3]
    assert np.abs(ours[0] - unit[labels == 0].mean(0)).max() <= 1e-6
    # Protected tokens: the library's default keeps the first token out of the clustering.
    protected = HierarchicalTokenPooling(pool_factor=n / 4.5, normalize_embeddings=False)
    out = protected.pool_one(torch.from_numpy(unit.astype(np.float32))).numpy()
    assert protected.num_protected_tokens == 1 and np.abs(out[0] - unit[0]).max() <= 1e-6 and len(out) == 1 + max(
        int((n - 1) // (n / 4.5)), 1)
    # Query pooling: the library's default pools documents only; the project pools both sides.
    default = HierarchicalTokenPooling(pool_factor=2.0)
    batch = [torch.from_numpy(unit.astype(np.float32))]
    assert default.pool(batch, task="query")[0] is batch[0]
    both = HierarchicalTokenPooling(pool_factor=2.0, num_protected_tokens=0, tasks=["query", "document"])
    assert len(both.pool(batch, task="query")[0]) == n // 2


def test_the_exported_token_pooling_row_is_the_library_pooling_of_the_projects_token_states(tmp_path):
    from sentence_transformers import MultiVectorEncoder

    from multivec.baselines.base_encoder import encode_token_states
    from multivec.baselines.token_pooling import pool_documents
    from multivec.interop.token_pooling_export import export_token_pooling, library_count, library_pool, sorted_rows

    texts = ["the cat sat on the mat , and the dog ran . " * k for k in (1, 2, 5)] + ["a b c d e f g h i"]
    ratio = 0.3
    info = export_token_pooling("tiny-random-bert", tmp_path / "st", ratio)
    assert info["modules"] == ["Transformer", "Normalize", "HierarchicalTokenPooling"]
    model = MultiVectorEncoder(str(tmp_path / "st"), device="cpu")  # the library's modules only
    got = model.encode_document(texts, convert_to_numpy=True)
    queries = model.encode_query(texts, convert_to_numpy=True)  # pooled too, as the project pools both sides
    states = encode_token_states("tiny-random-bert", texts, show_progress=False)
    ours = pool_documents(states, ratio)
    worst = 0.0
    for vectors, query, tokens, pooled in zip(got, queries, states, ours):
        n = len(tokens)
        assert len(vectors) == len(query) == library_count(n, ratio)
        assert len(pooled) == max(1, math.ceil(n * ratio - 1e-9))  # the project's k: ceil
        expected = library_pool(tokens, library_count(n, ratio))
        worst = max(worst, float(np.abs(sorted_rows(vectors) - sorted_rows(expected)).max()))
    print(f"\ntoken pooling export vs library pooling of the project's token states: {worst:.3g}")
    assert worst <= 1e-5
    card = (tmp_path / "st" / "README.md").read_text()
    assert "k = ceil(n r)" in card and "condensed" in card
