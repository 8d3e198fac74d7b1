"""Autoencoding (AE) documents: adjacent sentences packed into at most ``max_tokens`` subwords.

NUGGET (Qin & Van Durme 2023, section 5.1) trains its autoencoding objective on
documents made by concatenating adjacent sentences up to a length limit. Here:

- sentences are packed greedily, in order, within one article/chapter (a document never
  spans two of them, nor jumps over a skipped sentence); a sentence is never broken;
- lengths are subwords of the given tokenizer without special tokens
  (``add_special_tokens=False``), e.g. MiniLM's WordPiece at demo scale, mBART's
  SentencePiece at paper scale; every packed document is re-counted as a whole and
  re-split if joining changed its count, so none exceeds ``max_tokens``;
- a single sentence longer than ``max_tokens`` is skipped (not truncated: a cut
  sentence is not a sentence), and the number skipped is logged;
- the train/dev split is per document and deterministic: documents are ordered by
  ``sha256(f"{seed}:{id}")``; the first ``dev_size`` (or ``dev_fraction``) are dev, the
  rest train, after ``max_documents`` caps the total. Each split keeps stream order.

Rows are ``{"id", "source", "target"}`` with ``target == source`` (autoencoding).
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from tqdm import tqdm

from multivec.data.corpora import Paragraph
from multivec.inspect import length_summary

log = logging.getLogger(__name__)


class TokenCounter:
    """Counts a tokenizer's subwords (no special tokens) for a batch of texts."""

    def __init__(self, tokenizer, batch_size: int = 1024):
        self.tokenizer = tokenizer
        self.batch_size = batch_size

    def __call__(self, texts: Sequence[str]) -> list[int]:
        counts: list[int] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start:start + self.batch_size])
            ids = self.tokenizer(batch, add_special_tokens=False)["input_ids"]
            counts.extend(len(x) for x in ids)
        return counts


def pack_lengths(lengths: Sequence[int], max_tokens: int) -> tuple[list[list[int]], list[int]]:
    """Greedy in-order packing of items of the given lengths into groups of total <= ``max_tokens``.

    Returns ``(groups of item indices, indices of skipped items)``: an item longer than
    ``max_tokens`` is skipped and closes the current group, so groups hold only
    adjacent items.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be positive, not {max_tokens}")
    groups: list[list[int]] = []
    skipped: list[int] = []
    current: list[int] = []
    total = 0
    for index, length in enumerate(lengths):
        if length > max_tokens:
            skipped.append(index)
            if current:
                groups.append(current)
            current, total = [], 0
            continue
        if current and total + length > max_tokens:
            groups.append(current)
            current, total = [], 0
        current.append(index)
        total += length
    if current:
        groups.append(current)
    return groups, skipped


def enforce_limit(groups: list[list[int]], count_group: Callable[[list[list[int]]], list[int]],
                  max_tokens: int) -> list[list[int]]:
    """Re-count each packed group as a whole; re-split any group over ``max_tokens`` greedily.

    Summed per-item counts equal the whole-text count for WordPiece and SentencePiece
    with whitespace pre-splitting, so this is a guard that normally changes nothing.
    """
    counts = count_group(groups)
    out: list[list[int]] = []
    for group, count in zip(groups, counts):
        if count <= max_tokens:
            out.append(group)
            continue
        current: list[int] = []
        for index in group:
            if current and count_group([current + [index]])[0] > max_tokens:
                out.append(current)
                current = []
            current.append(index)
        out.append(current)
    return out


@dataclass
class PackedDocument:
    id: str
    corpus: str
    doc: str
    sentences: list[str]
    n_tokens: int

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


@dataclass
class PackingStats:
    paragraphs: int = 0
    sentences: int = 0
    streams: int = 0  # articles / chapters
    documents: int = 0
    skipped_long_sentences: int = 0
    document_tokens: list[int] = field(default_factory=list)

    def summary(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k != "document_tokens"}
        out["tokens_per_document"] = length_summary(self.document_tokens)
        return out


_SLUG = re.compile(r"[^A-Za-z0-9]+")


def slug(text: str, limit: int = 40) -> str:
    return _SLUG.sub("_", text).strip("_")[:limit] or "untitled"


def group_streams(paragraphs: Iterable[Paragraph]) -> Iterable[list[Paragraph]]:
    """Runs of consecutive paragraphs from the same (corpus, doc): the unit documents stay within."""
    current: list[Paragraph] = []
    for paragraph in paragraphs:
        if current and (paragraph.corpus, paragraph.doc) != (current[0].corpus, current[0].doc):
            yield current
            current = []
        current.append(paragraph)
    if current:
        yield current


def pack_paragraphs(paragraphs: Iterable[Paragraph], count_tokens: Callable[[Sequence[str]], list[int]],
                    max_tokens: int, split_sentences: Callable[[str], list[str]],
                    stats: PackingStats | None = None) -> list[PackedDocument]:
    """Pack the sentences of each article/chapter into documents of <= ``max_tokens`` subwords."""
    stats = stats if stats is not None else PackingStats()
    documents: list[PackedDocument] = []
    stream_number = skipped_here = 0
    for stream in tqdm(group_streams(paragraphs), desc="packing documents", unit="article", leave=False):
        sentences: list[str] = []
        for paragraph in stream:
            stats.paragraphs += 1
            parts = paragraph.sentences if paragraph.sentences is not None else split_sentences(paragraph.text)
            sentences.extend(s for s in (" ".join(p.split()) for p in parts) if s)
        stats.sentences += len(sentences)
        stats.streams += 1
        if not sentences:
            continue
        lengths = count_tokens(sentences)
        groups, skipped = pack_lengths(lengths, max_tokens)
        stats.skipped_long_sentences += len(skipped)
        skipped_here += len(skipped)
        groups = enforce_limit(groups, lambda gs: count_tokens([" ".join(sentences[i] for i in g) for g in gs]),
                               max_tokens)
        totals = count_tokens([" ".join(sentences[i] for i in g) for g in groups])
        first = stream[0]
        prefix = f"{first.corpus}/{stream_number:04d}-{slug(first.doc)}"
        for k, (group, total) in enumerate(zip(groups, totals)):
            documents.append(PackedDocument(f"{prefix}/{k:03d}", first.corpus, first.doc,
                                            [sentences[i] for i in group], total))
            stats.document_tokens.append(total)
        stream_number += 1
    stats.documents += len(documents)
    if skipped_here:
        corpora = ", ".join(dict.fromkeys(d.corpus for d in documents)) or "input"
        log.warning("%s: skipped %d sentences longer than %d subwords (never truncated)",
                    corpora, skipped_here, max_tokens)
    return documents


def split_key(seed: int, doc_id: str) -> str:
    return hashlib.sha256(f"{seed}:{doc_id}".encode("utf-8")).hexdigest()


def deterministic_split(items: Sequence, ids: Sequence[str], *, dev_size: int | None = None,
                        dev_fraction: float | None = None, seed: int = 0,
                        max_documents: int | None = None) -> tuple[list, list]:
    """Split ``items`` into (train, dev) by the hash order of their ids; each keeps input order."""
    if (dev_size is None) == (dev_fraction is None):
        raise ValueError("give exactly one of dev_size and dev_fraction")
    if len(set(ids)) != len(ids):
        raise ValueError("document ids are not unique")
    order = sorted(range(len(items)), key=lambda i: split_key(seed, ids[i]))
    if max_documents is not None:
        order = order[:max_documents]
    n = len(order)
    if dev_fraction is not None:
        if not 0 <= dev_fraction < 1:
            raise ValueError(f"dev_fraction must be in [0, 1), not {dev_fraction}")
        n_dev = int(round(dev_fraction * n))
    else:
        n_dev = dev_size
    if n_dev < 0 or (n_dev >= n and n > 0):
        raise ValueError(f"dev set of {n_dev} documents leaves no training documents out of {n}")
    dev_idx, train_idx = sorted(order[:n_dev]), sorted(order[n_dev:])
    return [items[i] for i in train_idx], [items[i] for i in dev_idx]


def autoencoding_rows(documents: Iterable[PackedDocument]) -> list[dict]:
    return [{"id": d.id, "source": d.text, "target": d.text} for d in documents]


def build_autoencoding_corpus(paragraph_sources: Iterable[Iterable[Paragraph]], tokenizer, max_tokens: int = 128,
                              *, dev_fraction: float | None = None, dev_size: int | None = None, seed: int = 0,
                              max_documents: int | None = None,
                              split_sentences: Callable[[str], list[str]] | None = None,
                              mirror=None, stats: PackingStats | None = None) -> tuple[list[dict], list[dict]]:
    """AE rows ``(train, dev)`` from paragraph sources (see the module docstring).

    ``split_sentences`` defaults to NLTK punkt (data looked up in ``<mirror>/nltk_data``).
    Pass a ``PackingStats`` to receive the counts (they are also logged).
    """
    if split_sentences is None:
        from multivec.data.corpora import english_sentence_splitter

        split_sentences = english_sentence_splitter(mirror)
    stats = stats if stats is not None else PackingStats()
    count = TokenCounter(tokenizer)
    documents: list[PackedDocument] = []
    for paragraphs in paragraph_sources:
        documents.extend(pack_paragraphs(paragraphs, count, max_tokens, split_sentences, stats))
    train, dev = deterministic_split(documents, [d.id for d in documents], dev_size=dev_size,
                                     dev_fraction=dev_fraction, seed=seed, max_documents=max_documents)
    log.info("autoencoding corpus: %s; %d train / %d dev documents", stats.summary(), len(train), len(dev))
    return autoencoding_rows(train), autoencoding_rows(dev)
