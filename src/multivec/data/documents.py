"""Autoencoding (AE) documents: adjacent sentences packed into at most ``max_tokens`` model tokens.

NUGGET (Qin & Van Durme 2023, section 5.1) trains its autoencoding objective on
documents made by concatenating adjacent sentences up to a length limit. Here:

- sentences are packed greedily, in order, within one article/chapter (a document never
  spans two of them, nor jumps over a skipped sentence); a sentence is never broken;
- ``max_tokens`` bounds the document as the model tokenizes it, special tokens included
  ([CLS]/[SEP], mBART's language code and ``</s>``), so it equals the model's
  ``nugget.max_source_tokens`` and no document is truncated in training. Sentences are
  counted without special tokens and packed into ``max_tokens - specials``; every packed
  document is then re-counted as a whole (with its special tokens) and re-split if
  joining changed its count, so none exceeds ``max_tokens``;
- a single sentence longer than that budget is skipped (not truncated: a cut sentence is
  not a sentence), and the number skipped is logged;
- each row keeps its sentence boundaries: ``source_sentence_ends`` lists the character
  offsets (exclusive ends) in ``source`` where a sentence ends (the last is ``len(source)``);
- the train/dev split is per document and deterministic: documents are ordered by
  ``sha256(f"{seed}:{id}")``; the first ``dev_size`` (or ``dev_fraction``) are dev, the
  rest train, after ``max_documents`` caps the total. Each split keeps stream order.

Rows are ``{"id", "source", "target", "source_sentence_ends"}`` with ``target == source``.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from tqdm import tqdm

from multivec.data.records import Paragraph
from multivec.inspection import length_summary
from multivec.io import check_minimum

log = logging.getLogger(__name__)


class TokenCounter:
    """Counts a tokenizer's tokens for a batch of texts, as the model will see them.

    ``counter(texts)`` counts pieces without special tokens (what packing adds up);
    ``counter.whole(texts)`` counts whole documents with the special tokens the tokenizer
    adds (what the model's ``truncation=True, max_length=...`` sees); ``counter.specials`` is
    their number. ``target=True`` tokenizes as a target (``text_target=``: mBART-50 then uses
    its ``tgt_lang`` code).
    """

    def __init__(self, tokenizer, batch_size: int = 1024, target: bool = False):
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.target = target
        self.specials = self._count([""], True)[0]

    def _count(self, texts: Sequence[str], special: bool) -> list[int]:
        counts: list[int] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start:start + self.batch_size])
            if self.target:
                ids = self.tokenizer(text_target=batch, add_special_tokens=special)["input_ids"]
            else:
                ids = self.tokenizer(batch, add_special_tokens=special)["input_ids"]
            counts.extend(len(x) for x in ids)
        return counts

    def __call__(self, texts: Sequence[str]) -> list[int]:
        return self._count(texts, False)

    def whole(self, texts: Sequence[str]) -> list[int]:
        return self._count(texts, True)

    def budget(self, max_tokens: int) -> int:
        """Tokens left for text in a document of ``max_tokens`` once the special tokens are in."""
        if max_tokens <= self.specials:
            raise ValueError(f"max_tokens {max_tokens} leaves no room for text next to the tokenizer's "
                             f"{self.specials} special tokens")
        return max_tokens - self.specials


def whole_counter(count_tokens: Callable[[Sequence[str]], list[int]]) -> Callable[[Sequence[str]], list[int]]:
    """``count_tokens.whole`` for a ``TokenCounter``; a plain callable counts documents as it counts pieces."""
    return getattr(count_tokens, "whole", count_tokens)


def text_budget(count_tokens, max_tokens: int) -> int:
    return count_tokens.budget(max_tokens) if hasattr(count_tokens, "budget") else max_tokens


def sentence_ends(sentences: Sequence[str], separator: str = " ") -> list[int]:
    """Exclusive end offsets of each sentence in ``separator.join(sentences)``."""
    ends, position = [], 0
    for sentence in sentences:
        position += len(sentence)
        ends.append(position)
        position += len(separator)
    return ends


def locate_sentences(text: str, sentences: Sequence[str]) -> list[int]:
    """Exclusive end offsets in ``text`` of ``sentences`` (substrings of ``text``, in order).

    The sentence splitters strip whitespace but never change text, so each sentence is found
    after the previous one; the last end is always ``len(text)`` (a paragraph or pair ends a
    sentence). Raises ``ValueError`` if a sentence is not in ``text``.
    """
    ends, position = [], 0
    for sentence in sentences:
        start = text.find(sentence, position)
        if start < 0:
            raise ValueError(f"sentence {sentence[:60]!r} is not in its text {text[:60]!r}")
        position = start + len(sentence)
        ends.append(position)
    if not ends or ends[-1] != len(text):
        ends.append(len(text))
    return ends


def pack_lengths(lengths: Sequence[int] | Sequence[tuple[int, ...]],
                 max_tokens: int | tuple[int, ...]) -> tuple[list[list[int]], list[int]]:
    """Greedy in-order packing of items of the given lengths into groups of total <= ``max_tokens``.

    Lengths may be tuples (e.g. source and target side of a pair) with one limit per side:
    a group then closes when the next item would take any side past its limit.
    Returns ``(groups of item indices, indices of skipped items)``: an item longer than
    ``max_tokens`` (on any side) is skipped and closes the current group, so groups hold only
    adjacent items.
    """
    limits = tuple(max_tokens) if isinstance(max_tokens, (tuple, list)) else (max_tokens,)
    if any(limit < 1 for limit in limits):
        raise ValueError(f"max_tokens must be positive, not {max_tokens}")
    groups: list[list[int]] = []
    skipped: list[int] = []
    current: list[int] = []
    totals = [0] * len(limits)
    for index, length in enumerate(lengths):
        sides = tuple(length) if isinstance(length, (tuple, list)) else (length,)
        if len(sides) != len(limits):
            raise ValueError(f"item {index} has {len(sides)} lengths for {len(limits)} limits")
        if any(n > limit for n, limit in zip(sides, limits)):
            skipped.append(index)
            if current:
                groups.append(current)
            current, totals = [], [0] * len(limits)
            continue
        if current and any(t + n > limit for t, n, limit in zip(totals, sides, limits)):
            groups.append(current)
            current, totals = [], [0] * len(limits)
        current.append(index)
        totals = [t + n for t, n in zip(totals, sides)]
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

    @property
    def sentence_ends(self) -> list[int]:
        return sentence_ends(self.sentences)


@dataclass
class PackingStats:
    paragraphs: int = 0
    sentences: int = 0
    streams: int = 0  # articles / chapters
    documents: int = 0
    skipped_long_sentences: int = 0
    corpora: list[str] = field(default_factory=list)  # corpus names read (e.g. wikitext2-valid)
    train_documents: int = 0
    dev_documents: int = 0
    document_tokens: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k not in ("document_tokens", "warnings")}
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
    """Pack the sentences of each article/chapter into documents of <= ``max_tokens`` tokens
    (special tokens included when ``count_tokens`` is a ``TokenCounter``)."""
    stats = stats if stats is not None else PackingStats()
    budget, whole = text_budget(count_tokens, max_tokens), whole_counter(count_tokens)
    documents: list[PackedDocument] = []
    stream_number = skipped_here = 0
    for stream in tqdm(group_streams(paragraphs), desc="packing documents", unit="article", leave=False):
        sentences: list[str] = []
        if stream[0].corpus not in stats.corpora:
            stats.corpora.append(stream[0].corpus)
        for paragraph in stream:
            stats.paragraphs += 1
            parts = paragraph.sentences if paragraph.sentences is not None else split_sentences(paragraph.text)
            sentences.extend(s for s in (" ".join(p.split()) for p in parts) if s)
        stats.sentences += len(sentences)
        stats.streams += 1
        if not sentences:
            continue
        lengths = count_tokens(sentences)
        groups, skipped = pack_lengths(lengths, budget)
        stats.skipped_long_sentences += len(skipped)
        skipped_here += len(skipped)
        groups = enforce_limit(groups, lambda gs: whole([" ".join(sentences[i] for i in g) for g in gs]),
                               max_tokens)
        totals = whole([" ".join(sentences[i] for i in g) for g in groups])
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
        log.warning("%s: skipped %d sentences longer than %d subwords (%d with special tokens; never truncated)",
                    corpora, skipped_here, budget, max_tokens)
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
    return [{"id": d.id, "source": d.text, "target": d.text, "source_sentence_ends": d.sentence_ends}
            for d in documents]


def build_autoencoding_corpus(paragraph_sources: Iterable[Iterable[Paragraph]], tokenizer, max_tokens: int = 128,
                              *, dev_fraction: float | None = None, dev_size: int | None = None, seed: int = 0,
                              max_documents: int | None = None,
                              split_sentences: Callable[[str], list[str]] | None = None,
                              mirror=None, stats: PackingStats | None = None,
                              min_documents: int | None = None) -> tuple[list[dict], list[dict]]:
    """AE rows ``(train, dev)`` from paragraph sources (see the module docstring).

    ``split_sentences`` defaults to NLTK punkt (data looked up in ``<mirror>/nltk_data``).
    Pass a ``PackingStats`` to receive the counts (they are also logged). Zero documents
    raise ``EmptyOutputError``; fewer than ``min_documents`` log a warning (kept in ``stats.warnings``).
    """
    if split_sentences is None:
        from multivec.data.corpora import english_sentence_splitter

        split_sentences = english_sentence_splitter(mirror)
    stats = stats if stats is not None else PackingStats()
    count = TokenCounter(tokenizer)
    documents: list[PackedDocument] = []
    for paragraphs in paragraph_sources:
        documents.extend(pack_paragraphs(paragraphs, count, max_tokens, split_sentences, stats))
    sources = "paragraphs read from " + (", ".join(stats.corpora) or "no source")
    check_minimum("autoencoding documents", len(documents), None, sources)
    train, dev = deterministic_split(documents, [d.id for d in documents], dev_size=dev_size,
                                     dev_fraction=dev_fraction, seed=seed, max_documents=max_documents)
    check_minimum("autoencoding training documents", len(train), None, sources)
    check_minimum("autoencoding documents", len(train) + len(dev), min_documents, sources, stats.warnings)
    stats.train_documents, stats.dev_documents = len(train), len(dev)
    log.info("autoencoding corpus: %s; %d train / %d dev documents", stats.summary(), len(train), len(dev))
    return autoencoding_rows(train), autoencoding_rows(dev)


def model_tokenizers(settings: dict, nugget: dict, target: bool = True) -> dict:
    """The tokenizers and limits a corpus must be counted with so that the model truncates nothing.

    ``settings`` is a ``corpora.<objective>`` config block, ``nugget`` the ``nugget`` block.
    Returns ``tokenizer`` (the source tokenizer as the model loads it: mBART-50 with
    ``src_lang``), and, when ``target`` and the model's target vocabulary is the source
    tokenizer's (``nugget.target_tokenizer: source``, paper scale), ``target_tokenizer``
    (with ``tgt_lang``) and ``max_target_tokens``; else those two are None (a BPE target
    vocabulary is trained on the corpus, after it is built). Raises ``ValueError`` naming the
    keys when the corpus limit exceeds the model's ``max_source_tokens``.
    """
    from multivec.nugget.processing import load_source_tokenizer

    if settings["max_tokens"] > nugget["max_source_tokens"]:
        raise ValueError(f"corpora max_tokens {settings['max_tokens']} exceeds nugget.max_source_tokens "
                         f"{nugget['max_source_tokens']}: the model would truncate the sources")
    src_lang = nugget.get("src_lang") or "en_XX"
    out = {"tokenizer": load_source_tokenizer(settings["tokenizer"], src_lang),
           "target_tokenizer": None, "max_target_tokens": None}
    if target and nugget.get("target_tokenizer") == "source":
        target_tokenizer = load_source_tokenizer(nugget["encoder"], src_lang)
        if hasattr(target_tokenizer, "tgt_lang"):
            target_tokenizer.tgt_lang = nugget.get("tgt_lang") or "zh_CN"
        out.update(target_tokenizer=target_tokenizer, max_target_tokens=nugget["max_target_tokens"])
    if settings["tokenizer"] != nugget["encoder"]:
        log.info("corpus tokenizer %s differs from the model's encoder %s: limits hold for the former",
                 settings["tokenizer"], nugget["encoder"])
    return out
