"""BM25Index reproduces rank-bm25's BM25Okapi scores and rankings, on real text and edge cases."""

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from multivec.io import read_docs_tsv
from multivec.retrieval.bm25 import BM25Index, tokenize, top_k_indices


@pytest.fixture(scope="module")
def pi_sample(mirror):
    docs = read_docs_tsv(mirror / "nugget-data/paraphrase_identification/dev/docs.txt", on_empty="skip")
    corpus = [docs[f"R{i}"] for i in range(200)]
    queries = [docs[f"L{i}"] for i in range(0, 200, 5) if f"L{i}" in docs]
    return corpus, queries


def test_tokenize_lowercases_and_keeps_word_runs():
    assert tokenize("I do n't want Mrs. Canter's room , OK?") == ["i", "do", "n", "t", "want", "mrs", "canter",
                                                                 "s", "room", "ok"]


def test_scores_match_rank_bm25_on_real_documents(pi_sample):
    corpus, queries = pi_sample
    reference = BM25Okapi([tokenize(d) for d in corpus])
    expected = np.array([reference.get_scores(tokenize(q)) for q in queries])
    ours = BM25Index(corpus, show_progress=False).score(queries, batch_size=7, show_progress=False)
    assert ours.shape == (len(queries), 200)
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-6)
    assert expected.max() > 100  # real, non-trivial scores


def test_top19_matches_rank_bm25_on_real_documents(pi_sample):
    corpus, queries = pi_sample
    reference = BM25Okapi([tokenize(d) for d in corpus])
    indices, scores = BM25Index(corpus, show_progress=False).top_k(queries, 19, show_progress=False)
    for row, query in enumerate(queries):
        expected_scores = reference.get_scores(tokenize(query))
        assert list(indices[row]) == list(np.argsort(-expected_scores, kind="stable")[:19])
        np.testing.assert_allclose(scores[row], expected_scores[indices[row]], atol=1e-6)


def test_negative_idf_floor_repeated_and_unknown_terms_match_rank_bm25():
    corpus = [["the", "cat", "sat"], ["the", "dog"], ["the", "cat"], ["a", "bird", "the"], ["fish"]]
    index = BM25Index(corpus, show_progress=False)
    reference = BM25Okapi(corpus)
    # "the" is in 4 of 5 documents: negative raw idf, floored at epsilon * average idf
    assert index.idf[index.vocabulary["the"]] == pytest.approx(0.25 * reference.average_idf)
    for query in (["the"], ["cat", "cat", "the"], ["unicorn", "dog"], ["unicorn"]):
        np.testing.assert_allclose(index.score([query], show_progress=False)[0], reference.get_scores(query),
                                   atol=1e-12)
    np.testing.assert_allclose(index.score_documents(["cat", "dog"], [2, 0]),
                               reference.get_batch_scores(["cat", "dog"], [2, 0]), atol=1e-12)


def test_top_k_respects_ranges_and_exclusions():
    corpus = [f"apple {'pear ' * i}" for i in range(30)]
    index = BM25Index(corpus, show_progress=False)
    indices, _ = index.top_k(["apple pear", "apple pear"], 5, allowed_ranges=[(10, 20), (0, 30)],
                             excluded=[[11, 12], list(range(0, 30, 2))], show_progress=False)
    assert all(10 <= j < 20 and j not in (11, 12) for j in indices[0])
    assert all(j % 2 == 1 for j in indices[1])
    with pytest.raises(ValueError, match="fewer than 5"):
        index.top_k(["apple"], 5, allowed_ranges=[(0, 4)], show_progress=False)


def test_top_k_indices_breaks_ties_by_lower_index():
    row = np.array([1.0, 3.0, 2.0, 3.0, 2.0, 2.0, 0.0])
    assert list(top_k_indices(row, 4)) == [1, 3, 2, 4]
    assert list(top_k_indices(row, 7)) == [1, 3, 2, 4, 5, 0, 6]


def test_empty_corpus_is_refused():
    with pytest.raises(ValueError):
        BM25Index(["", "   "], show_progress=False)
