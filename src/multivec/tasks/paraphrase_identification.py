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
builder is for rebuilding it from ParaBank or for other sizes. ParaBank v1.0 is about 9 GB,
too large to hold or index whole (the reason for the window), so the builder streams it:
``build_paraphrase_identification_task_from_file`` reads the file twice and holds at most
two windows of documents, one BM25 index per block of queries (memory flat in the file
size: ``benchmarks/parabank_memory.py``).

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
from typing import Callable, Iterable, Iterator, NamedTuple, Sequence

import numpy as np
from tqdm.auto import tqdm

from multivec.io import EmptyOutputError, MalformedInputError, check_minimum, decode_line
from multivec.retrieval.bm25 import BM25Index
from multivec.tasks.ranking_task import RankingQuery, RankingTask

log = logging.getLogger(__name__)

SCORE_SNIFF_LINES = 100
DRAW_BLOCK = 4096  # sentence pairs whose drop decisions are drawn at once (same stream, fewer numpy calls)


class SentencePair(NamedTuple):  # a tuple: millions are made while streaming ParaBank
    reference: str
    paraphrase: str


@dataclass(frozen=True)
class DocumentPair:
    reference: str
    paraphrase: str
    first_sentence: int  # index of the first sentence pair the document spans
    n_sentences: int


def _numbered_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a UTF-8 (optionally gzipped) file, each line checked as
    ``multivec.io.decode_line`` checks it (a control character names the line, a leading byte-order mark is
    dropped). Decoded as text for speed; on a decoding error the file is rescanned line by line to name the
    bad line."""
    opener = gzip.open if str(path).endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8", newline="\n") as handle:
            for number, line in enumerate(handle, start=1):
                yield number, decode_line(line, path, number)
    except UnicodeDecodeError:
        with opener(path, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                decode_line(raw, path, number)
        raise


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


@dataclass
class ParabankCounts:
    """What a PI build read and made (written to the task's ``meta.json``)."""

    lines: int = 0  # non-blank lines read
    sentence_pairs: int = 0
    documents: int = 0  # document pairs built
    discarded_empty_side: int = 0  # document pairs with every sentence of one side dropped
    cut_long_sentences: int = 0  # single sentences longer than max_tokens, cut to max_tokens
    windows_indexed: int = 0  # BM25 indexes built (one per block of queries)
    max_documents_held: int = 0  # the most documents in memory at once (flat as the file grows)


def iter_parabank(path: str | os.PathLike, paraphrase_column: int = 0, limit: int | None = None,
                  counts: ParabankCounts | None = None) -> Iterator[SentencePair]:
    """Stream ParaBank v1.0 lines (format in the module docstring) as sentence pairs, in file order.

    Blank lines are skipped; a line without the chosen paraphrase, or with an empty
    reference or paraphrase, raises ``MalformedInputError`` naming file:line; a file with no
    pair raises ``EmptyOutputError``.
    """
    scored = _has_score_column(path)
    first = 1 if scored else 0
    column = first + 1 + paraphrase_column
    n = 0
    for number, line in _numbered_lines(path):
        if not line.strip():
            continue
        fields = line.split("\t")
        if scored and not _is_number(fields[0]):
            raise MalformedInputError(path, number, f"expected a score in the first column, got {fields[0][:40]!r}")
        if len(fields) <= column:
            raise MalformedInputError(path, number, f"expected [score<TAB>]reference<TAB>paraphrase..., found "
                                      f"{len(fields)} field(s), no paraphrase number {paraphrase_column}")
        reference, paraphrase = fields[first].strip(), fields[column].strip()
        if not reference or not paraphrase:
            raise MalformedInputError(path, number, "empty reference or paraphrase")
        n += 1
        if counts is not None:
            counts.lines += 1
            counts.sentence_pairs += 1
        yield SentencePair(reference, paraphrase)
        if limit is not None and n >= limit:
            break
    if n == 0:
        raise EmptyOutputError(f"{path}: no ParaBank sentence pairs (empty file)")


def read_parabank(path: str | os.PathLike, paraphrase_column: int = 0, limit: int | None = None) -> list[SentencePair]:
    """All of ``iter_parabank`` as a list (small files and tests; the task builder streams)."""
    return list(iter_parabank(path, paraphrase_column, limit))


def iter_documents(pairs: Iterable[SentencePair], rng: np.random.Generator, max_tokens: int = 256,
                   drop_probability: float = 0.2, counts: ParabankCounts | None = None) -> Iterator[DocumentPair]:
    """Concatenate adjacent sentence pairs into parallel documents (Appendix A), streaming.

    Each side's sentence is dropped independently with ``drop_probability``; a document is
    closed when the next pair would take either side past ``max_tokens`` whitespace tokens.
    A sentence longer than ``max_tokens`` on its own is cut to ``max_tokens`` tokens (counted).
    Document pairs with an empty side (every sentence dropped there) are discarded and counted.
    """
    counts = counts if counts is not None else ParabankCounts()
    reference: list[str] = []
    paraphrase: list[str] = []
    first = index = 0
    keeps: list[list[bool]] = []
    for pair in pairs:
        if not keeps:  # drop decisions drawn DRAW_BLOCK pairs at a time (a numpy call per pair is slow)
            keeps = (rng.random((DRAW_BLOCK, 2)) >= drop_probability).tolist()[::-1]
        keep_reference, keep_paraphrase = keeps.pop()
        ref_tokens = pair.reference.split() if keep_reference else []
        para_tokens = pair.paraphrase.split() if keep_paraphrase else []
        if len(ref_tokens) > max_tokens or len(para_tokens) > max_tokens:
            counts.cut_long_sentences += 1
            ref_tokens, para_tokens = ref_tokens[:max_tokens], para_tokens[:max_tokens]
        if len(reference) + len(ref_tokens) > max_tokens or len(paraphrase) + len(para_tokens) > max_tokens:
            if reference and paraphrase:
                counts.documents += 1
                yield DocumentPair(" ".join(reference), " ".join(paraphrase), first, index - first)
            elif index > first:
                counts.discarded_empty_side += 1
            reference, paraphrase, first = [], [], index
        reference.extend(ref_tokens)
        paraphrase.extend(para_tokens)
        index += 1
    if reference and paraphrase:
        counts.documents += 1
        yield DocumentPair(" ".join(reference), " ".join(paraphrase), first, index - first)
    elif index > first:
        counts.discarded_empty_side += 1


def build_documents(pairs: Sequence[SentencePair], rng: np.random.Generator, max_tokens: int = 256,
                    drop_probability: float = 0.2) -> list[DocumentPair]:
    """All of ``iter_documents`` as a list; discarded document pairs are logged."""
    counts = ParabankCounts()
    documents = list(iter_documents(pairs, rng, max_tokens, drop_probability, counts))
    if counts.discarded_empty_side:
        log.info("discarded %d document pair(s) with an empty side", counts.discarded_empty_side)
    return documents


def sliding_window(index: int, n_documents: int, window: int) -> tuple[int, int]:
    """The ``window`` documents around ``index``, shifted inward at the ends: (start, stop)."""
    start = min(max(0, index - window // 2), max(0, n_documents - window))
    return start, min(n_documents, start + window)


def block_span(block: int, n_documents: int, window: int) -> tuple[int, int]:
    """Documents that the sliding windows of every query in block ``block`` (documents
    ``block*window .. (block+1)*window - 1``) can reach: the span one BM25 index covers."""
    lo = sliding_window(block * window, n_documents, window)[0]
    hi = sliding_window(min(n_documents - 1, (block + 1) * window - 1), n_documents, window)[1]
    return lo, hi


def build_paraphrase_identification_task(pairs: Sequence[SentencePair] | Callable[[], Iterable[SentencePair]],
                                         n_queries: int | None = 1024, window: int = 1024, n_negatives: int = 19,
                                         max_tokens: int = 256, drop_probability: float = 0.2, seed: int = 0,
                                         show_progress: bool = True,
                                         counts: ParabankCounts | None = None,
                                         min_queries: int | None = None, source: str = "the ParaBank input",
                                         warnings: list[str] | None = None) -> RankingTask:
    """The PI task: documents from ``pairs``, queries ``L<i>``, candidates ``R<j>`` (Appendix A).

    ``pairs`` is a sequence, or a function returning a fresh iterator over them (a file is
    read twice and never held whole: ``build_paraphrase_identification_task_from_file``).
    Pass 1 builds the documents only to count them; ``n_queries`` documents are then drawn
    uniformly (seeded) as queries (None: every document). Pass 2 rebuilds the same documents
    (same seed) and keeps at most two windows of them: queries are taken in blocks of
    ``window`` documents, and each block's BM25 index covers the documents its queries'
    sliding windows reach (``block_span``), so idf comes from that span — all documents when
    there are no more than ``window``. Each query's negatives are restricted to its sliding
    window and never include its answer or a document whose text equals the answer's. The
    answer is inserted at a seeded random position among the candidates. Deterministic given
    ``seed``. Zero documents raise ``EmptyOutputError`` naming ``source``; fewer than
    ``min_queries`` queries log a warning (appended to ``warnings``).
    """
    make_pairs = pairs if callable(pairs) else (lambda: pairs)
    counts = counts if counts is not None else ParabankCounts()
    rng = np.random.default_rng(seed)
    n_docs = sum(1 for _ in iter_documents(make_pairs(), rng, max_tokens, drop_probability, counts))
    check_minimum("PI documents", n_docs, None, source)
    if n_docs < n_negatives + 1:
        raise ValueError(f"{n_docs} documents from the sentence pairs; need at least {n_negatives + 1}")
    if min(window, n_docs) < n_negatives + 1:
        raise ValueError(f"window {window} leaves fewer than {n_negatives + 1} candidates")
    if n_queries is None or n_queries >= n_docs:
        if n_queries is not None and n_queries > n_docs:
            log.warning("asked for %d queries but only %d documents were built; using all", n_queries, n_docs)
        query_indices = np.arange(n_docs)
    else:
        query_indices = np.sort(rng.choice(n_docs, size=n_queries, replace=False))
    by_block: dict[int, list[int]] = {}
    for i in query_indices:
        by_block.setdefault(int(i) // window, []).append(int(i))

    docs: dict[str, str] = {}
    queries: list[RankingQuery] = []
    held: dict[int, DocumentPair] = {}  # documents of the current span (and the next block's start)
    blocks = iter(sorted(by_block))
    block = next(blocks, None)
    span = block_span(block, n_docs, window) if block is not None else None
    progress = tqdm(total=len(query_indices), desc="PI queries", disable=not show_progress)
    documents = iter_documents(make_pairs(), np.random.default_rng(seed), max_tokens, drop_probability)
    for j, document in enumerate(documents):
        if span is None:
            break
        if j >= span[0]:
            held[j] = document
            counts.max_documents_held = max(counts.max_documents_held, len(held))
        while span is not None and (j + 1 == span[1]):
            queries.extend(_block_queries(by_block[block], held, span, n_docs, window, n_negatives, rng, docs,
                                          show_progress))
            counts.windows_indexed += 1
            progress.update(len(by_block[block]))
            block = next(blocks, None)
            span = block_span(block, n_docs, window) if block is not None else None
            held = {k: d for k, d in held.items() if span is not None and k >= span[0]}
    progress.close()
    if len(queries) != len(query_indices):
        raise RuntimeError(f"pass 2 built fewer documents than pass 1 ({len(queries)} of {len(query_indices)} "
                           "queries): the input changed while it was read")
    task = RankingTask(docs, queries)
    task.validate()
    check_minimum("PI queries", task.n_queries, min_queries, source, warnings)
    return task


def _block_queries(block_queries: list[int], held: dict[int, DocumentPair], span: tuple[int, int], n_docs: int,
                   window: int, n_negatives: int, rng: np.random.Generator, docs: dict[str, str],
                   show_progress: bool) -> list[RankingQuery]:
    """Queries of one block: BM25 over the span's paraphrase documents, negatives from each window."""
    lo, hi = span
    paraphrases = [held[j].paraphrase for j in range(lo, hi)]
    same_text: dict[str, list[int]] = {}
    for k, text in enumerate(paraphrases):
        same_text.setdefault(text, []).append(k)
    index = BM25Index(paraphrases, show_progress=False)
    ranges = [tuple(x - lo for x in sliding_window(i, n_docs, window)) for i in block_queries]
    negatives, _ = index.top_k([held[i].reference for i in block_queries], n_negatives, allowed_ranges=ranges,
                               excluded=[same_text[paraphrases[i - lo]] for i in block_queries],
                               show_progress=False)
    queries = []
    for i, negative_row in zip(block_queries, negatives):
        candidates = [f"R{lo + int(k)}" for k in negative_row]
        position = int(rng.integers(0, n_negatives + 1))
        candidates.insert(position, f"R{i}")
        queries.append(RankingQuery(f"L{i}", candidates, position))
        docs[f"L{i}"] = held[i].reference
        for c in candidates:
            docs[c] = held[int(c[1:])].paraphrase
    return queries


def build_paraphrase_identification_task_from_file(path: str | os.PathLike, paraphrase_column: int = 0,
                                                   counts: ParabankCounts | None = None,
                                                   **kwargs) -> RankingTask:
    """The PI task streamed from a ParaBank file (read twice, never held whole); see
    ``build_paraphrase_identification_task`` for the keyword arguments."""
    counts = counts if counts is not None else ParabankCounts()
    first_pass = [True]

    def make_pairs():  # lines are counted on the first pass, which reads the whole file
        counting = counts if first_pass[0] else None
        first_pass[0] = False
        return iter_parabank(path, paraphrase_column, counts=counting)

    return build_paraphrase_identification_task(make_pairs, counts=counts, source=str(path), **kwargs)


def parse_document_index(doc_id: str) -> int:
    """``"R17"`` → 17: the document index behind an ``L``/``R`` id."""
    return int(doc_id[1:])


__all__ = ["SentencePair", "DocumentPair", "ParabankCounts", "iter_parabank", "read_parabank", "iter_documents",
           "build_documents", "sliding_window", "block_span", "build_paraphrase_identification_task",
           "build_paraphrase_identification_task_from_file", "parse_document_index"]
