"""MRR with pessimistic ties, P@1 and R@k on hand-made rankings, eq. 10 MaxSim-mean against a brute-force loop,
and the broadcast and all-pairs cosines."""

import math

import numpy as np
import pytest
import torch

from multivec.metrics.maxsim import cosine, cosine_matrix, maxsim_mean, pad_vector_sets
from multivec.metrics.ranking import (
    mrr_at,
    precision_at_1,
    precision_recall_at,
    ranks_of_answers,
    recall_at_k,
    reciprocal_ranks,
)


def test_ranks_and_mrr_on_hand_made_rankings():
    scores = [[0.9, 0.1, 0.5],   # answer 0 first
              [0.2, 0.8, 0.5],   # answer 0 last
              [0.3, 0.7, 0.9]]   # answer 1 second
    answers = [0, 0, 1]
    assert list(ranks_of_answers(scores, answers)) == [1, 3, 2]
    np.testing.assert_allclose(reciprocal_ranks(scores, answers), [1, 1 / 3, 1 / 2])
    assert mrr_at(scores, answers) == pytest.approx(100 * (1 + 1 / 3 + 1 / 2) / 3)
    assert mrr_at(scores, answers, k=2) == pytest.approx(100 * (1 + 0 + 1 / 2) / 3)


def test_ties_count_against_the_answer():
    constant = np.zeros((4, 20))
    assert list(ranks_of_answers(constant, [0, 5, 19, 0])) == [20, 20, 20, 20]
    assert mrr_at(constant, [0, 0, 0, 0]) == pytest.approx(5.0)
    assert ranks_of_answers([[1.0, 1.0, 0.5, 1.0]], [1])[0] == 3


def test_precision_and_recall_on_a_hand_made_ranking():
    ranking = [7, 3, 9, 1, 4, 8, 2, 6, 5, 0]
    got = precision_recall_at(ranking, {3, 5}, ks=(1, 5, 10))
    assert got == {"p@1": 0.0, "r@1": 0.0, "r@5": 0.5, "r@10": 1.0}
    assert precision_recall_at([3, 7], {3}, ks=(1,))["p@1"] == 1.0
    assert precision_at_1([], {3}) == 0.0 and recall_at_k([3, 7], {3, 5}, 2) == 0.5
    with pytest.raises(ValueError, match="without gold"):
        precision_recall_at(ranking, set(), ks=(1,))


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="NaN"):
        mrr_at([[0.1, math.nan]], [0])
    with pytest.raises(ValueError, match="answer index"):
        mrr_at([[0.1, 0.2]], [2])
    with pytest.raises(ValueError):
        mrr_at([0.1, 0.2], [0])


def brute_force_maxsim_mean(query: np.ndarray, doc: np.ndarray) -> float:
    total = 0.0
    for q in query:
        best = -math.inf
        for d in doc:
            best = max(best, float(q @ d / (np.linalg.norm(q) * np.linalg.norm(d))))
        total += best
    return total / len(query)


def test_maxsim_mean_matches_brute_force_with_padding():
    rng = np.random.default_rng(0)
    queries = [rng.normal(size=(n, 8)).astype(np.float32) for n in (1, 5, 3)]
    docs = [[rng.normal(size=(n, 8)).astype(np.float32) for n in lengths] for lengths in ((2, 7), (1, 4), (6, 3))]
    q, q_mask = pad_vector_sets(queries)
    flat_docs, flat_mask = pad_vector_sets([d for group in docs for d in group])
    d = flat_docs.view(3, 2, *flat_docs.shape[1:])
    d_mask = flat_mask.view(3, 2, -1)
    got = maxsim_mean(q.unsqueeze(1), q_mask.unsqueeze(1), d, d_mask)
    assert got.shape == (3, 2)
    for b in range(3):
        for c in range(2):
            assert got[b, c].item() == pytest.approx(brute_force_maxsim_mean(queries[b], docs[b][c]), abs=1e-5)
    # padding really is ignored: large padding values change nothing
    d_noisy = d.clone()
    d_noisy[~d_mask] = 100.0
    q_noisy = q.clone()
    q_noisy[~q_mask] = -50.0
    torch.testing.assert_close(maxsim_mean(q_noisy.unsqueeze(1), q_mask.unsqueeze(1), d_noisy, d_mask), got)


def test_maxsim_mean_is_asymmetric_and_numpy_friendly():
    a = np.array([[1.0, 0.0], [0.0, 1.0]])
    b = np.array([[1.0, 0.0]])
    ones_a, ones_b = np.ones(2, bool), np.ones(1, bool)
    assert maxsim_mean(a, ones_a, b, ones_b).item() == pytest.approx(0.5)   # each of a's vectors finds its best in b
    assert maxsim_mean(b, ones_b, a, ones_a).item() == pytest.approx(1.0)
    with pytest.raises(ValueError):
        maxsim_mean(a, np.zeros(2, bool), b, ones_b)


def test_cosine_broadcasts_and_handles_zero_vectors():
    q = torch.tensor([[1.0, 0.0], [0.0, 0.0]])
    d = torch.tensor([[[2.0, 0.0], [0.0, 3.0], [-1.0, 0.0]], [[1.0, 1.0], [1.0, 0.0], [0.0, 1.0]]])
    got = cosine(q.unsqueeze(1), d)
    torch.testing.assert_close(got, torch.tensor([[1.0, 0.0, -1.0], [0.0, 0.0, 0.0]]))


def test_cosine_matrix_is_every_pair_as_one_matrix_product():
    generator = torch.Generator().manual_seed(0)
    queries, candidates = torch.randn(3, 8, generator=generator), torch.randn(5, 8, generator=generator)
    got = cosine_matrix(queries, candidates)
    expected = torch.nn.functional.normalize(queries, dim=-1) @ torch.nn.functional.normalize(candidates, dim=-1).T
    assert got.shape == (3, 5) and got.dtype == torch.float32
    assert torch.equal(got, expected)  # the very ops the sub-sentence encoder's results were computed with
    torch.testing.assert_close(got, cosine(queries[:, None], candidates[None]))
