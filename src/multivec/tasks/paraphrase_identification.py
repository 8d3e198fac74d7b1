"""Document paraphrase identification (PI) built from ParaBank v1.0 (NUGGET §6.1, Appendix A).

Recipe (Appendix A): ParaBank v1.0 keeps the sentence order of its source corpus, so
adjacent sentences form documents. Walking the sentence pairs in order, each reference
sentence and each paraphrase sentence is dropped independently with probability 0.2; the
kept sentences are appended to the reference and paraphrase documents in parallel, and a
document pair is closed when the next pair would take either side past 256 tokens
(whitespace tokens; ParaBank is pre-tokenised, and the released set's longest side has
exactly 256). For each query (a reference document ``L<i>``) the answer is its paraphrase
document ``R<i>``; the 19 negatives are the paraphrase documents BM25 ranks highest with the
reference document as query, among the 1024 documents of a sliding window around ``i``.

The released set (``nugget-data/paraphrase_identification``) needs none of this; the
builder is for rebuilding it from ParaBank or for other sizes.

ParaBank v1.0 file format, as this reader accepts it: UTF-8 text (``.gz`` allowed), one
reference sentence a line, tab-separated: ``[score<TAB>]reference<TAB>paraphrase_1[<TAB>
paraphrase_2 ...]``. Whether a score column comes first is decided once per file from its
first 100 non-blank lines (every first field parses as a number, and every line has at
least three fields). ``paraphrase_column`` (0 = first paraphrase) picks the paraphrase used.
"""

from __future__ import annotations

import gzip
import logging
import os
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np
from tqdm.auto import tqdm

from multivec.io import MalformedInputError
from multivec.retrieval.bm25 import BM25Index
from multivec.tasks.ranking_task import RankingQuery, RankingTask

log = logging.getLogger(__name__)

SCORE_SNIFF_LINES = 100


@dataclass(frozen=True)
class SentencePair:
    reference: str
    paraphrase: str


@dataclass(frozen=True)
class DocumentPair:
    reference: str
    paraphrase: str
    first_sentence: int  # index of the first sentence pair the document spans
    n_sentences: int


def _numbered_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                yield number, raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as err:
                raise MalformedInputError(path, number, f"not valid UTF-8 ({err.reason})") from None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _has_score_column(path: str | os.PathLike) -> bool:
    seen = 0
    for _, line in _numbered_lines(path):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) < 3 or not _is_number(fields[0]):
            return False
        seen += 1
        if seen >= SCORE_SNIFF_LINES:
            break
    return seen > 0


def read_parabank(path: str | os.PathLike, paraphrase_column: int = 0, limit: int | None = None) -> list[SentencePair]:
    """Read ParaBank v1.0 lines (format in the module docstring) as sentence pairs, in file order.

    Blank lines are skipped; a line without the chosen paraphrase, or with an empty
    reference or paraphrase, raises ``MalformedInputError`` naming file:line.
    """
    scored = _has_score_column(path)
    first = 1 if scored else 0
    pairs = []
    for number, line in _numbered_lines(path):
        if not line.strip():
            continue
        fields = line.split("\t")
        if scored and not _is_number(fields[0]):
            raise MalformedInputError(path, number, f"expected a score in the first column, got {fields[0][:40]!r}")
        column = first + 1 + paraphrase_column
        if len(fields) <= column:
            raise MalformedInputError(path, number, f"expected [score<TAB>]reference<TAB>paraphrase..., found "
                                      f"{len(fields)} field(s), no paraphrase number {paraphrase_column}")
        reference, paraphrase = fields[first].strip(), fields[column].strip()
        if not reference or not paraphrase:
            raise MalformedInputError(path, number, "empty reference or paraphrase")
        pairs.append(SentencePair(reference, paraphrase))
        if limit is not None and len(pairs) >= limit:
            break
    return pairs


def build_documents(pairs: Sequence[SentencePair], rng: np.random.Generator, max_tokens: int = 256,
                    drop_probability: float = 0.2) -> list[DocumentPair]:
    """Concatenate adjacent sentence pairs into parallel documents (Appendix A).

    Each side's sentence is dropped independently with ``drop_probability``; a document is
    closed when the next pair would take either side past ``max_tokens`` whitespace tokens.
    A sentence longer than ``max_tokens`` on its own is cut to ``max_tokens`` tokens. Document
    pairs with an empty side (every sentence dropped there) are discarded and counted in the log.
    """
    documents: list[DocumentPair] = []
    reference: list[str] = []
    paraphrase: list[str] = []
    first = 0
    discarded = 0

    def close(end: int):
        nonlocal discarded
        if reference and paraphrase:
            documents.append(DocumentPair(" ".join(reference), " ".join(paraphrase), first, end - first))
        elif end > first:
            discarded += 1

    for index, pair in enumerate(pairs):
        keep_reference, keep_paraphrase = rng.random(2) >= drop_probability
        ref_tokens = pair.reference.split()[:max_tokens] if keep_reference else []
        para_tokens = pair.paraphrase.split()[:max_tokens] if keep_paraphrase else []
        if len(reference) + len(ref_tokens) > max_tokens or len(paraphrase) + len(para_tokens) > max_tokens:
            close(index)
            reference, paraphrase, first = [], [], index
        reference.extend(ref_tokens)
        paraphrase.extend(para_tokens)
    close(len(pairs))
    if discarded:
        log.info("discarded %d document pair(s) with an empty side", discarded)
    return documents


def sliding_window(index: int, n_documents: int, window: int) -> tuple[int, int]:
    """The ``window`` documents around ``index``, shifted inward at the ends: (start, stop)."""
    start = min(max(0, index - window // 2), max(0, n_documents - window))
    return start, min(n_documents, start + window)


def build_paraphrase_identification_task(pairs: Sequence[SentencePair], n_queries: int | None = 1024,
                                         window: int = 1024, n_negatives: int = 19, max_tokens: int = 256,
                                         drop_probability: float = 0.2, seed: int = 0,
                                         show_progress: bool = True) -> RankingTask:
    """The PI task: documents from ``pairs``, queries ``L<i>``, candidates ``R<j>`` (Appendix A).

    ``n_queries`` documents are drawn uniformly (seeded) as queries when more documents
    exist (None: every document). BM25 statistics come from all paraphrase documents; each
    query's negatives are restricted to its sliding window and never include its answer or a
    document whose text equals the answer's. The answer is inserted at a seeded random
    position among the candidates. Deterministic given ``seed``.
    """
    rng = np.random.default_rng(seed)
    documents = build_documents(pairs, rng, max_tokens=max_tokens, drop_probability=drop_probability)
    n_docs = len(documents)
    if n_docs < n_negatives + 1:
        raise ValueError(f"{n_docs} documents from {len(pairs)} sentence pairs; need at least {n_negatives + 1}")
    if min(window, n_docs) < n_negatives + 1:
        raise ValueError(f"window {window} leaves fewer than {n_negatives + 1} candidates")
    if n_queries is None or n_queries >= n_docs:
        if n_queries is not None and n_queries > n_docs:
            log.warning("asked for %d queries but only %d documents were built; using all", n_queries, n_docs)
        query_indices = np.arange(n_docs)
    else:
        query_indices = np.sort(rng.choice(n_docs, size=n_queries, replace=False))

    paraphrases = [d.paraphrase for d in documents]
    same_text: dict[str, list[int]] = {}
    for j, text in enumerate(paraphrases):
        same_text.setdefault(text, []).append(j)
    index = BM25Index(paraphrases, show_progress=show_progress)
    negatives, _ = index.top_k([documents[i].reference for i in query_indices], n_negatives,
                               allowed_ranges=[sliding_window(int(i), n_docs, window) for i in query_indices],
                               excluded=[same_text[paraphrases[i]] for i in query_indices],
                               show_progress=show_progress)

    docs: dict[str, str] = {}
    queries: list[RankingQuery] = []
    for i, negative_row in tqdm(zip(query_indices, negatives), total=len(query_indices), desc="PI queries",
                                disable=not show_progress):
        candidates = [f"R{j}" for j in negative_row]
        position = int(rng.integers(0, n_negatives + 1))
        candidates.insert(position, f"R{i}")
        queries.append(RankingQuery(f"L{i}", candidates, position))
        docs[f"L{i}"] = documents[i].reference
    for j in sorted({int(c[1:]) for q in queries for c in q.candidates}):
        docs[f"R{j}"] = paraphrases[j]
    task = RankingTask(docs, queries)
    task.validate()
    return task


def parse_document_index(doc_id: str) -> int:
    """``"R17"`` → 17: the document index behind an ``L``/``R`` id."""
    return int(doc_id[1:])


__all__ = ["SentencePair", "DocumentPair", "read_parabank", "build_documents", "sliding_window",
           "build_paraphrase_identification_task", "parse_document_index"]
