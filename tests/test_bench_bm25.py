"""benchmarks/bm25_speed.py's core on tiny inputs, and the fast BM25 top-k path against the plain dense one.

Correctness and agreement only, never timing."""


import numpy as np
import pytest
from benchmark_scripts import load_benchmark
from rank_bm25 import BM25Okapi

from multivec.retrieval import bm25 as bm25_module
from multivec.retrieval.bm25 import BM25Index, top_k_indices



def _load_benchmark():
    return load_benchmark("bm25_speed")


def dense_top_k(index, queries, k, allowed_ranges=None, excluded=None):
    """The reference: every document scored densely, disallowed ones at -inf, then top_k_indices."""
    scores = index.score(queries, show_progress=False)
    out = []
    for i, row in enumerate(scores):
        if allowed_ranges is not None:
            lo, hi = allowed_ranges[i]
            row[:lo] = -np.inf
            row[hi:] = -np.inf
        if excluded is not None:
            row[np.asarray(list(excluded[i]), dtype=np.int64)] = -np.inf
        out.append(top_k_indices(row, k))
    return np.array(out)


@pytest.mark.parametrize("kernel", [True, False])
def test_fast_top_k_equals_dense_top_k_with_ties_ranges_and_exclusions(monkeypatch, kernel):
    if not kernel:
        monkeypatch.setattr(bm25_module, "_csc_matvec", None)  # the public fallback
    bench = _load_benchmark()
    rng = np.random.default_rng(3)
    # a small vocabulary: many equal scores (ties) and many documents matching nothing (score 0)
    passages = [[f"w{t}" for t in rng.integers(0, 12, size=rng.integers(1, 6))] for _ in range(300)]
    passages += [list(p) for p in passages[:40]]  # exact duplicates: exact ties
    index = BM25Index(passages, show_progress=False)
    queries = bench.sample_queries(passages, 60) + [["w1", "w1", "w2"], ["nothing"], ["w11"]]
    for k in (1, 5, 19):
        got, got_scores = index.top_k(queries, k, show_progress=False)
        np.testing.assert_array_equal(got, dense_top_k(index, queries, k))
        reference = BM25Okapi(passages)
        for row, query in enumerate(queries):
            np.testing.assert_allclose(got_scores[row], reference.get_scores(query)[got[row]], atol=1e-9)
    ranges = [(int(a), int(a) + 30) for a in rng.integers(0, 300, size=len(queries))]
    excluded = [set(rng.integers(0, 340, size=8).tolist()) for _ in queries]
    got, _ = index.top_k(queries, 7, allowed_ranges=ranges, excluded=excluded, show_progress=False)
    np.testing.assert_array_equal(got, dense_top_k(index, queries, 7, ranges, excluded))


def test_negative_idf_floor_keeps_dense_order():
    # every term is in most documents: rank-bm25's floor epsilon * mean idf is negative here, so unmatched
    # documents (score 0) outrank matched ones; the fast path must still agree with the dense ranking
    passages = [["a", "b"], ["a", "b"], ["a", "c"], ["a", "b", "c"], ["b", "c"], ["a", "b", "c"]]
    index = BM25Index(passages, show_progress=False)
    assert index.average_idf < 0
    queries = [["a"], ["b", "c"], ["a", "a", "b"]]
    for k in (1, 3, 6):
        np.testing.assert_array_equal(index.top_k(queries, k, show_progress=False)[0], dense_top_k(index, queries, k))


def test_benchmark_core_on_a_tiny_synthetic_corpus():
    bench = _load_benchmark()
    passages = bench.synthetic_corpus(400, vocab_size=300, mean_length=20, seed=0)
    assert len(passages) == 400 and all(len(p) >= 10 for p in passages)
    assert passages == bench.synthetic_corpus(400, vocab_size=300, mean_length=20, seed=0)  # seeded
    queries = bench.sample_queries(passages, 30)
    rows = bench.compare("synthetic", passages, queries, k=5, repeats=1, n_reference=10, measure_memory=True,
                         numba=False)
    by_name = {r["implementation"]: r for r in rows}
    ours = by_name["multivec BM25Index (= rank-bm25 BM25Okapi)"]
    assert ours["max_abs_score_difference_vs_rank_bm25"] <= 1e-6  # compare() stops otherwise
    assert ours["index_mb"] > 0 and ours["peak_score_mb"] > 0
    # bm25s: every method gets an agreement figure; lucene and atire share idf ranking up to a constant factor
    for method in ("robertson", "atire", "lucene"):
        share = next(r for r in rows if f"method={method}" in r["implementation"])["top_k_overlap_with_rank_bm25"]
        assert 0.0 <= share <= 1.0
    assert any(r["implementation"].startswith("rank-bm25") for r in rows)


def test_benchmark_stops_when_a_ranking_disagrees(monkeypatch):
    bench = _load_benchmark()
    passages = bench.synthetic_corpus(200, vocab_size=100, mean_length=15, seed=1)
    queries = bench.sample_queries(passages, 5)
    index = BM25Index(passages, show_progress=False)
    real_top_k = index.top_k
    monkeypatch.setattr(index, "top_k", lambda *a, **kw: (real_top_k(*a, **kw)[0][:, ::-1].copy(),
                                                          real_top_k(*a, **kw)[1][:, ::-1].copy()))
    with pytest.raises(SystemExit, match="differs from rank-bm25"):
        bench.check_against_rank_bm25(index, passages, queries, 5)


def test_mirror_corpus_needs_the_mirror(tmp_path):
    bench = _load_benchmark()
    with pytest.raises(SystemExit, match="missing"):
        bench.mirror_passages(tmp_path)
