"""BM25 as one sparse-matrix scorer, used by both Table 2 task builders (NUGGET Appendix A).

The NUGGET paper draws its 19 hard negatives per query with BM25 but does not say which
implementation. We reproduce rank-bm25's ``BM25Okapi`` (the common Python choice) exactly:

    idf(t)   = log((N - n_t + 0.5) / (n_t + 0.5))          N documents, n_t containing t
               negative idfs are replaced by epsilon * mean(idf over the vocabulary)
    s(q, d)  = sum over query tokens q_i (repeats count again) of
               idf(q_i) * f(q_i, d) * (k1 + 1) / (f(q_i, d) + k1 * (1 - b + b * |d| / avgdl))

with k1 = 1.5, b = 0.75, epsilon = 0.25. rank-bm25 loops over every document in Python
for every query term, far too slow for WikiText-103; here the per-(document, term) weights
are precomputed once into a sparse matrix W (documents × vocabulary), and a batch of
queries is scored as the sparse product ``query_term_counts @ W.T``. ``top_k`` scores one query at
a time, adding only the posting lists (CSC columns) of its own terms into a dense vector (the
work of bm25s' precomputed-score index; memory: the index plus one row per query, never queries ×
documents), then ranks only the documents scoring at least a lower bound on the k-th best taken
from the rarest terms' postings; the choice and tie order are those of ``top_k_indices`` on the
whole row (benchmarks/bm25_speed.py: 200,000 passages, beside bm25s).

Tokeniser (one for every use): lowercase, then the maximal runs of Unicode word characters
(regex ``\\w+``). Punctuation is dropped; ``n't`` in the pre-tokenised NUGGET release becomes
``n`` and ``t``.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, Sequence

import numpy as np
import scipy.sparse as sp
from tqdm.auto import tqdm

try:  # scipy's C kernel y += A @ x for CSC matrices (private name; BM25Index.query_scores falls back without it)
    from scipy.sparse._sparsetools import csc_matvec as _csc_matvec
except ImportError:  # pragma: no cover - other scipy versions
    _csc_matvec = None

TOKEN_PATTERN = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    """The BM25 tokeniser: lowercase, Unicode word-character runs (``\\w+``)."""
    return TOKEN_PATTERN.findall(text.lower())


class BM25Index:
    """BM25Okapi over a fixed corpus, scoring batches of queries as sparse products.

    ``documents``: raw texts (tokenised with ``tokenizer``) or already-tokenised lists.
    """

    def __init__(self, documents: Sequence[str] | Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75,
                 epsilon: float = 0.25, tokenizer: Callable[[str], list[str]] = tokenize,
                 chunk_size: int = 10_000, show_progress: bool = True):
        if len(documents) == 0:
            raise ValueError("BM25Index needs at least one document")
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self.tokenizer = tokenizer
        self.vocabulary: dict[str, int] = {}
        term_frequencies = self._count_terms(documents, chunk_size, show_progress)  # docs × vocab, raw counts
        self.n_documents = term_frequencies.shape[0]
        self.document_lengths = np.asarray(term_frequencies.sum(axis=1)).ravel().astype(np.float64)
        total = self.document_lengths.sum()
        if total == 0:
            raise ValueError("BM25Index: every document is empty after tokenisation")
        self.average_document_length = total / self.n_documents

        document_frequency = np.bincount(term_frequencies.indices, minlength=len(self.vocabulary))
        idf = np.log(self.n_documents - document_frequency + 0.5) - np.log(document_frequency + 0.5)
        self.average_idf = float(idf.mean())
        idf[idf < 0] = self.epsilon * self.average_idf
        self.idf = idf

        # W[d, t] = idf(t) * f (k1 + 1) / (f + k1 (1 - b + b |d| / avgdl)), only where f > 0.
        tf = term_frequencies.tocsr()
        rows = np.repeat(np.arange(self.n_documents), np.diff(tf.indptr))
        length_norm = self.k1 * (1 - self.b + self.b * self.document_lengths / self.average_document_length)
        f = tf.data.astype(np.float64)
        weights = self.idf[tf.indices] * f * (self.k1 + 1) / (f + length_norm[rows])
        # CSC: a batch of queries slices the columns (terms) it uses.
        self.weights = sp.csr_matrix((weights, tf.indices, tf.indptr), shape=tf.shape).tocsc()

    def _tokens(self, document: str | Sequence[str]) -> Sequence[str]:
        return self.tokenizer(document) if isinstance(document, str) else document

    def _count_terms(self, documents, chunk_size: int, show_progress: bool) -> sp.csr_matrix:
        blocks = []
        starts = range(0, len(documents), chunk_size)
        for start in tqdm(starts, desc="BM25 index", unit="chunk", disable=not show_progress or len(starts) < 2):
            rows, cols = [], []
            for offset, document in enumerate(documents[start:start + chunk_size]):
                ids = [self.vocabulary.setdefault(token, len(self.vocabulary)) for token in self._tokens(document)]
                cols.extend(ids)
                rows.extend([offset] * len(ids))
            n_rows = min(chunk_size, len(documents) - start)
            blocks.append(sp.csr_matrix((np.ones(len(cols), dtype=np.float64), (rows, cols)),
                                        shape=(n_rows, len(self.vocabulary))))  # duplicates are summed
        width = len(self.vocabulary)
        blocks = [sp.csr_matrix((m.data, m.indices, m.indptr), shape=(m.shape[0], width)) for m in blocks]
        matrix = sp.vstack(blocks, format="csr")
        matrix.sum_duplicates()
        return matrix

    def query_term_counts(self, queries: Sequence[str] | Sequence[Sequence[str]]) -> sp.csr_matrix:
        """Queries × vocabulary counts; tokens outside the corpus vocabulary score 0 and are dropped."""
        rows, cols = [], []
        for row, query in enumerate(queries):
            for token in self._tokens(query):
                term = self.vocabulary.get(token)
                if term is not None:
                    rows.append(row)
                    cols.append(term)
        return sp.csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(len(queries), len(self.vocabulary)))

    def _sparse_scores(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        """Batch × documents scores as a sparse matrix: only the documents that share a term with a query.

        ``counts @ W.T`` touches, per query, exactly the posting lists of its own terms (the CSC weights
        transposed are a CSR term × document matrix, no copy), so the work and memory follow the postings,
        not batch × documents. Documents left out score exactly 0.
        """
        return (counts @ self.weights.T).tocsr()

    def _score_batch(self, counts: sp.csr_matrix) -> np.ndarray:
        """Dense (batch × documents) scores of a batch of query count rows."""
        return self._sparse_scores(counts).toarray()

    def score(self, queries: Sequence[str] | Sequence[Sequence[str]], batch_size: int = 64,
              show_progress: bool = True) -> np.ndarray:
        """BM25 scores of every query against every document: (n_queries × n_documents)."""
        counts = self.query_term_counts(queries)
        out = np.empty((len(queries), self.n_documents))
        for start in tqdm(range(0, len(queries), batch_size), desc="BM25 scoring", unit="batch",
                          disable=not show_progress):
            out[start:start + batch_size] = self._score_batch(counts[start:start + batch_size])
        return out

    def score_documents(self, query: str | Sequence[str], document_indices: Sequence[int]) -> np.ndarray:
        """Scores of one query against the given documents only (rank-bm25's get_batch_scores)."""
        counts = self.query_term_counts([query])
        terms = counts.indices
        if len(terms) == 0:
            return np.zeros(len(document_indices))
        sub = self.weights[np.asarray(document_indices)][:, terms]
        return np.asarray(sub @ counts.data).ravel()

    def top_k(self, queries: Sequence[str] | Sequence[Sequence[str]], k: int,
              allowed_ranges: Sequence[tuple[int, int]] | None = None,
              excluded: Sequence[Iterable[int]] | None = None, batch_size: int = 64,
              show_progress: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """The k best documents per query: (indices, scores), each (n_queries × k), best first.

        ``allowed_ranges[i] = (start, stop)`` restricts query i to documents start..stop-1;
        ``excluded[i]`` lists documents query i may not return. Ties are broken by the lower
        document index, so the result does not depend on argpartition's internal order.
        Raises ValueError when fewer than k documents are allowed for a query.
        """
        counts = self.query_term_counts(queries)
        n = len(queries)
        indices = np.empty((n, k), dtype=np.int64)
        scores = np.empty((n, k))
        for start in tqdm(range(0, n, batch_size), desc="BM25 top-k", unit="batch", disable=not show_progress):
            for i in range(start, min(start + batch_size, n)):
                terms = counts.indices[counts.indptr[i]:counts.indptr[i + 1]]
                row = self.query_scores(terms, counts.data[counts.indptr[i]:counts.indptr[i + 1]])
                if allowed_ranges is not None:
                    lo, hi = allowed_ranges[i]
                    row[:lo] = -np.inf
                    row[hi:] = -np.inf
                if excluded is not None:
                    row[np.fromiter(excluded[i], dtype=np.int64)] = -np.inf
                chosen = bounded_top_k_indices(row, k, self._rare_postings(terms, 4 * k))
                if not np.isfinite(row[chosen]).all():
                    raise ValueError(f"query {i}: fewer than {k} documents are allowed "
                                     f"(range {allowed_ranges[i] if allowed_ranges is not None else 'all'})")
                indices[i] = chosen
                scores[i] = row[chosen]
        return indices, scores

    def query_scores(self, terms: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Dense scores of one query against every document, from its distinct vocabulary ids and their counts.

        Adds count × the posting list (CSC column) of each term into one dense vector, touching only those
        postings: scipy's own C kernel (``csc_matvec``, y += A x) on each column in place; without it, the
        public equivalent ``W[:, terms] @ counts`` (which copies the columns first, about half the speed).
        """
        w = self.weights
        if _csc_matvec is None or w.indices.dtype != w.indptr.dtype:
            if len(terms) == 0:
                return np.zeros(self.n_documents)
            return np.asarray(w[:, terms] @ np.asarray(counts, dtype=np.float64)).ravel()
        scores = np.zeros(self.n_documents)
        indptr, rows, data = w.indptr, w.indices, w.data
        for term, count in zip(terms.tolist(), np.asarray(counts, dtype=np.float64).tolist()):
            start, stop = indptr[term], indptr[term + 1]
            _csc_matvec(self.n_documents, 1, np.array([0, stop - start], dtype=indptr.dtype), rows[start:stop],
                        data[start:stop], np.array([count]), scores)
        return scores

    def _rare_postings(self, terms: np.ndarray, at_least: int) -> np.ndarray:
        """Distinct documents from the query's rarest terms' posting lists (at least ``at_least`` postings when the
        query has that many, cut at ``at_least``): any k of them score at most the query's k-th best, so their
        k-th best score bounds it from below (rare terms' documents usually score high: a tight bound)."""
        indptr = self.weights.indptr
        lengths = indptr[terms + 1] - indptr[terms]
        chunks, total = [], 0
        for j in np.argsort(lengths, kind="stable"):
            start = indptr[terms[j]]
            take = min(int(lengths[j]), at_least - total)
            chunks.append(self.weights.indices[start:start + take])
            total += take
            if total >= at_least:
                break
        return np.unique(np.concatenate(chunks)) if chunks else np.empty(0, dtype=np.int64)


def bounded_top_k_indices(row: np.ndarray, k: int, hint: np.ndarray) -> np.ndarray:
    """``top_k_indices(row, k)``, found faster: the k-th best finite value among the distinct documents
    ``hint`` is a lower bound on the row's k-th best, so only documents scoring at least that are ranked.
    Ties still go to the lower index (the candidates keep index order); falls back to the whole row when
    ``hint`` holds fewer than k finite values."""
    if len(hint) >= k:
        values = row[hint]
        values = values[np.isfinite(values)]
        if len(values) >= k:
            bound = np.partition(values, len(values) - k)[len(values) - k]
            candidates = np.flatnonzero(row >= bound)
            return candidates[top_k_indices(row[candidates], k)]
    return top_k_indices(row, k)


def top_k_indices(row: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest values, best first; ties go to the lower index."""
    if k > len(row):
        raise ValueError(f"asked for the top {k} of {len(row)} values")
    if k == len(row):
        return np.lexsort((np.arange(len(row)), -row))
    threshold = row[np.argpartition(-row, k - 1)[k - 1]]
    above = np.flatnonzero(row > threshold)
    at = np.flatnonzero(row == threshold)[: k - len(above)]
    chosen = np.concatenate([above, at])
    return chosen[np.lexsort((chosen, -row[chosen]))]
