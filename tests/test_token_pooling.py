"""Token pooling (Clavié et al. 2024, PyLate's pool_factor) at smoke scale: k = ceil(n·r) vectors per
document as NUGGET keeps, k = n gives back the unpooled vectors, and the clustering is Ward's over the
rows of the cosine-distance matrix, as PyLate runs it."""

import numpy as np
import pytest
import torch

from multivec.baselines.token_pooling import (cluster_labels, nugget_counts, pool_documents, pool_documents_at,
                                             pool_tokens)


def _docs(seed=0, lengths=(1, 2, 7, 20, 33)):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(n, 16)).astype(np.float32) for n in lengths]


@pytest.mark.parametrize("ratio", [0.05, 0.1, 0.15, 0.25, 0.3, 1.0])
def test_k_vectors_per_document_as_nugget_selects(ratio):
    from multivec.nugget.selection import nugget_counts as nugget_k

    docs = _docs()
    pooled = pool_documents(docs, ratio)
    expected = nugget_k(torch.tensor([len(d) for d in docs]), ratio).tolist()
    assert [len(p) for p in pooled] == expected == [nugget_counts(len(d), ratio) for d in docs]
    assert all(p.shape[1] == 16 and p.dtype == np.float32 for p in pooled)


def test_one_tree_serves_every_ratio():
    docs = _docs(5)
    at = pool_documents_at(docs, [0.1, 0.25])
    for ratio in (0.1, 0.25):
        assert all(np.array_equal(a, b) for a, b in zip(at[ratio], pool_documents(docs, ratio)))


def test_tied_merges_still_give_exactly_k():
    doc = np.repeat(np.eye(4, dtype=np.float32), 3, axis=0)  # 4 groups of 3 identical vectors: ties everywhere
    for k in range(1, 13):
        assert len(pool_tokens(doc, k)) == k


def test_k_equal_n_returns_the_unpooled_vectors():
    for doc in _docs(1):
        assert np.array_equal(pool_tokens(doc, len(doc)), doc)
    assert all(np.array_equal(p, d) for p, d in zip(pool_documents(_docs(2), 1.0), _docs(2)))


def test_separated_groups_pool_to_their_means():
    rng = np.random.default_rng(3)
    a, b = np.eye(8)[0], np.eye(8)[1]
    doc = np.stack([a + 0.01 * rng.normal(size=8) for _ in range(4)] + [b + 0.01 * rng.normal(size=8) for _ in range(3)]
                   + [a + 0.01 * rng.normal(size=8)])
    labels = cluster_labels(doc, 2)
    assert labels.tolist() == [0, 0, 0, 0, 1, 1, 1, 0]  # numbered by first member; the last token rejoins group a
    pooled = pool_tokens(doc, 2)
    unit = doc / np.linalg.norm(doc, axis=1, keepdims=True)
    assert np.allclose(pooled[0], unit[labels == 0].mean(0), atol=1e-6)
    assert np.allclose(pooled[1], unit[labels == 1].mean(0), atol=1e-6)


def test_clusters_are_pylates_ward_over_cosine_distance_rows():
    """The same partition as Ward linkage over the rows of 1 - cos, cut with fcluster(maxclust) (PyLate)."""
    from scipy.cluster.hierarchy import fcluster, linkage

    for doc in _docs(4, lengths=(12, 40)):
        unit = doc / np.linalg.norm(doc, axis=1, keepdims=True)
        reference = fcluster(linkage(1 - unit @ unit.T, method="ward"), t=5, criterion="maxclust")
        ours = cluster_labels(doc, 5)
        pairs = {(int(r), int(o)) for r, o in zip(reference, ours)}
        assert len(pairs) == 5 == len(set(ours.tolist()))  # a one-to-one relabelling


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="0 token vectors"):
        nugget_counts(0, 0.1)
    with pytest.raises(ValueError, match="0 < r <= 1"):
        nugget_counts(5, 0)
    with pytest.raises(ValueError, match="1 <= k <= n"):
        cluster_labels(np.ones((3, 2)), 4)
    with pytest.raises(ValueError, match=r"\(n × d\)"):
        pool_tokens(np.ones(3), 1)


def test_table2_rows_pool_the_base_states_and_score_like_colbart(tmp_path):
    """A token_pooling row reads the pooled base states, MaxSim-mean over the task's candidates; at r = 1 it
    ranks exactly as the ColBART row over the same base states."""
    from multivec.encodings import read_encodings, write_encodings
    from multivec.nugget.tables.table2_rows import (SIMILARITY, evaluate_row, row_metrics, table2_record,
                                                 write_token_pooling_encodings)
    from multivec.tasks.ranking_task import RankingQuery, RankingTask

    rng = np.random.default_rng(7)
    ids = [f"d{i}" for i in range(6)]
    lengths = [12, 30, 7, 19, 25, 9]
    write_encodings(tmp_path / "base", ids, [rng.normal(size=(n, 8)).astype(np.float32) for n in lengths],
                    info={"encoder": "tiny", "truncation": {"documents": 0}})
    task = RankingTask({i: f"text {i}" for i in ids},
                       [RankingQuery("d0", ["d1", "d2", "d3"], 1), RankingQuery("d4", ["d5", "d1", "d2"], 0)])
    means = write_token_pooling_encodings(tmp_path / "base", {0.25: tmp_path / "r0.25", 1.0: tmp_path / "r1"})
    pooled = read_encodings(tmp_path / "r0.25")
    assert [len(v) for v in pooled.vectors] == [nugget_counts(n, 0.25) for n in lengths]
    assert means[0.25] == pytest.approx(sum(nugget_counts(n, 0.25) for n in lengths) / 6)
    assert pooled.info["ratio"] == 0.25 and pooled.info["total_vectors"] == sum(nugget_counts(n, 0.25) for n in lengths)
    row = {"name": "token_pooling_r0.25", "kind": "token_pooling", "ratio": 0.25}
    assert SIMILARITY["token_pooling"] == "maxsim_mean"
    result = evaluate_row(row, task, tmp_path / "r0.25")
    metrics = row_metrics(row, "pi", result, tmp_path / "r0.25")
    assert metrics["vectors_per_doc"] == pytest.approx(means[0.25]) and metrics["truncation"] == {"documents": 0}
    record = table2_record(row, {"pi": metrics, "rr": metrics}, None)
    assert (record["model"], record["ratio"], record["multi_vector"]) == ("Token pooling", 0.25, True)
    full = evaluate_row({"name": "tp1", "kind": "token_pooling", "ratio": 1.0}, task, tmp_path / "r1")
    colbart = evaluate_row({"name": "colbart", "kind": "token_states"}, task, tmp_path / "base")
    assert full.mrr == pytest.approx(colbart.mrr)
