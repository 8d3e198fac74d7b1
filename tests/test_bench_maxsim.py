"""benchmarks/maxsim_speed.py's core on tiny inputs, and maxsim_mean's chunked path against one broadcast product.

Correctness and agreement only, never timing."""


import numpy as np
import pytest
from benchmark_scripts import load_benchmark
import torch

from multivec.metrics import maxsim



def _load_benchmark():
    return load_benchmark("maxsim_speed")


def unchunked(q, q_mask, d, d_mask, normalized=False):
    """maxsim_mean as one broadcast product (the formula of eq. 10, no chunking)."""
    if not normalized:
        q, d = maxsim.normalize(q), maxsim.normalize(d)
    similarity = (q @ d.transpose(-1, -2)).masked_fill(~d_mask.unsqueeze(-2), float("-inf"))
    best = similarity.amax(dim=-1).masked_fill(~q_mask, 0.0)
    return best.sum(dim=-1) / q_mask.sum(dim=-1).to(best.dtype)


@pytest.mark.parametrize("normalized", [False, True])
def test_chunked_maxsim_mean_gives_the_same_bits(monkeypatch, normalized):
    monkeypatch.setattr(maxsim, "CHUNK_ELEMENTS", 500)  # force many chunks on tiny inputs
    rng = np.random.default_rng(0)
    sets = [rng.normal(size=(n, 8)).astype(np.float32) for n in rng.integers(1, 9, size=7 * 6)]
    q, q_mask = maxsim.pad_vector_sets(sets[:7])
    d, d_mask = maxsim.pad_vector_sets(sets[7:])
    d, d_mask = d.view(7, 5, *d.shape[1:]), d_mask.view(7, 5, -1)
    if normalized:
        q, d = maxsim.normalize(q), maxsim.normalize(d)
    got = maxsim.maxsim_mean(q[:, None], q_mask[:, None], d, d_mask, normalized=normalized)
    assert got.shape == (7, 5)
    assert torch.equal(got, unchunked(q[:, None], q_mask[:, None], d, d_mask, normalized))
    # a query shared by every row (leading size 1) is not sliced
    shared = maxsim.maxsim_mean(q[:1, None], q_mask[:1, None], d, d_mask, normalized=normalized)
    assert torch.equal(shared, unchunked(q[:1, None], q_mask[:1, None], d, d_mask, normalized))


def test_pad_vector_sets_scatter_equals_per_set_copies():
    rng = np.random.default_rng(1)
    sets = [rng.normal(size=(n, 4)) for n in (3, 1, 5)]  # float64 in: rounded to float32 like a per-set copy
    padded, mask = maxsim.pad_vector_sets(sets)
    assert padded.dtype == torch.float32 and mask.tolist() == [[1, 1, 1, 0, 0], [1, 0, 0, 0, 0], [1] * 5]
    for i, s in enumerate(sets):
        assert torch.equal(padded[i, :len(s)], torch.as_tensor(s, dtype=torch.float32))
        assert not padded[i, len(s):].any()
    lists = maxsim.pad_vector_sets([s.tolist() for s in sets])
    assert torch.equal(lists[0], padded) and torch.equal(lists[1], mask)


def test_benchmark_core_agrees_on_tiny_inputs():
    bench = _load_benchmark()
    # 20-26 vectors per set: some real cosine of every query vector is positive, so PyLate's zero-scored
    # padding (see below) cannot win a max and all four implementations must agree
    rows = bench.compare("nuggets", n_queries=3, n_candidates=4, dim=16, batch_size=2, threads=1, repeats=1)
    assert {r["implementation"] for r in rows} == {
        "per-pair loop (numpy)", "multivec maxsim_mean (batched torch)",
        "PyLate colbert_scores einsum, re-stated (per query)", "PyLate colbert_kd_scores einsum, re-stated (batched)"}
    assert all(r["max_abs_difference_to_loop"] <= 1e-5 for r in rows)  # compare() stops otherwise


def test_pylate_restatement_semantics():
    bench = _load_benchmark()
    # PyLate's documented example (sum over query tokens, documents masked by multiplication)
    queries = torch.tensor([[[1.], [0.], [0.], [0.]], [[0.], [2.], [0.], [0.]], [[0.], [0.], [3.], [0.]]])
    documents = torch.tensor([[[10.], [0.], [1.]], [[0.], [100.], [10.]], [[1.], [0.], [1000.]]])
    documents_mask = torch.tensor([[1., 1., 1.], [1., 0., 1.], [1., 1., 1.]])
    queries_mask = torch.tensor([[1., 1., 1., 1.], [1., 1., 1., 1.], [1., 1., 0., 1.]])
    scores = bench.pylate_colbert_scores(queries, documents, queries_mask, documents_mask)
    assert scores.tolist() == [[10., 10., 1000.], [20., 20., 2000.], [0., 0., 0.]]
    # the documented difference: a padded position scores 0 and beats all-negative real similarities
    q = torch.tensor([[[1.0, 0.0]]])
    d = torch.tensor([[[-1.0, 0.0], [0.0, 0.0]]])
    d_mask = torch.tensor([[True, False]])
    assert bench.pylate_colbert_scores(q, d, None, d_mask.float()).item() == 0.0
    assert maxsim.maxsim_mean(q, torch.tensor([[True]]), d, d_mask).item() == -1.0


def test_benchmark_stops_when_a_result_disagrees(monkeypatch):
    bench = _load_benchmark()
    monkeypatch.setattr(bench, "run_ours", lambda q, c, b: bench.run_loop(q, c) + 1e-3)
    with pytest.raises(SystemExit, match="differs from the per-pair loop"):
        bench.compare("nuggets", n_queries=2, n_candidates=3, dim=16, batch_size=2, threads=1, repeats=1)
