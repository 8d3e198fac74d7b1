"""Translation (MT) documents, English -> Chinese, for NUGGET's MT objective.

NUGGET (Qin & Van Durme 2023, section 5.1) trains on WMT19 en-zh with adjacent
sentence pairs concatenated into documents of at most 128 (source) tokens. Rows are
``{"id", "source" (en), "target" (zh)}``.

- Demo scale: the Debian Reference paragraph pairs; pairs are packed in book order
  within each chapter (``doc``) into documents of <= ``max_tokens`` English tokens,
  never breaking a pair; train/dev split per document by hash (see
  ``multivec.data.documents.deterministic_split``).
- Paper scale: News Commentary v14 en-zh (``en<TAB>zh`` a line, blank lines between
  documents) packed the same way within each of its documents. This is the only WMT19
  en-zh training corpus that keeps document boundaries; the far larger UN and CWMT parts
  of WMT19 en-zh are not used (see ``multivec.data.sources``). The dev set is packed
  the same way from the WMT19 dev tarball's newsdev2017 and newstest2018 en-zh SGML
  files (documents are their ``<doc>`` elements).

``max_tokens`` bounds the English side as the model tokenizes it, special tokens included
(it equals ``nugget.max_source_tokens``, so no source is truncated in training); when the
target vocabulary is known before training (paper scale: mBART-50's own, with ``tgt_lang``),
the Chinese side must fit ``nugget.max_target_tokens`` the same way. A pair too long on
its own is skipped (and counted), and closes the current document so documents only hold
adjacent pairs. The English side of a document is its pairs joined by spaces; the Chinese
side is joined without spaces (``join_chinese``). Rows carry ``source_sentence_ends``: the
character offsets in ``source`` where an English sentence ends (punkt inside each pair,
and every pair boundary).
"""

from __future__ import annotations

import html
import logging
import os
import re
import tarfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from tqdm import tqdm

from multivec.data.corpora import join_chinese, read_debian_reference_pairs
from multivec.data.documents import (TokenCounter, deterministic_split, enforce_limit, locate_sentences, pack_lengths,
                                     sentence_ends, slug, text_budget, whole_counter)
from multivec.data.language import LanguageCheck
from multivec.data.news_commentary import read_news_commentary_tsv  # noqa: F401 (also imported from here)
from multivec.data.records import ParallelPair
from multivec.inspection import length_summary
from multivec.io import FirstSeen, MalformedInputError, check_minimum, decode_text, split_lines

log = logging.getLogger(__name__)

# Members of the WMT19 dev tarball (http://data.statmt.org/wmt19/translation-task/dev.tgz) that
# make the en-zh dev set: (name, English source file, Chinese reference file).
WMT19_DEV_SETS = (
    ("newsdev2017", "dev/newsdev2017-enzh-src.en.sgm", "dev/newsdev2017-enzh-ref.zh.sgm"),
    ("newstest2018", "dev/newstest2018-enzh-src.en.sgm", "dev/newstest2018-enzh-ref.zh.sgm"),
)


@dataclass
class TranslationStats:
    pairs: int = 0
    streams: int = 0  # chapters / WMT documents
    documents: int = 0
    skipped_long_pairs: int = 0  # either side too long (target side only when its limit is known)
    skipped_long_targets: int = 0
    skipped_lines: int = 0  # reader skips (misaligned lines), see read_news_commentary_tsv
    train_documents: int = 0
    dev_documents: int = 0
    source_tokens: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k not in ("source_tokens", "warnings")}
        out["source_tokens_per_document"] = length_summary(self.source_tokens)
        return out


# ---------------------------------------------------------------- readers

_SGM_DOC = re.compile(r"<doc\b[^>]*?\bdocid=\"([^\"]*)\"", re.IGNORECASE)
_SGM_SEG = re.compile(r"<seg\b[^>]*?\bid=\"?([^\">\s]+)\"?[^>]*>(.*?)</seg>", re.IGNORECASE)


@dataclass
class SgmDocument:
    """One ``<doc>`` of a WMT SGML file: its id, the line it starts on and its ``(seg_id, text, line)``."""

    docid: str
    line: int
    segments: list[tuple[str, str, int]] = field(default_factory=list)


def read_sgm_documents(text: str, label: str, language: str | None = None) -> list[SgmDocument]:
    """The ``<doc>`` elements of a WMT SGML file, checked: every ``<seg>`` inside a ``<doc>`` and parsable,
    no document id and no segment id (within its document) defined twice, at least one document, and
    (with ``language``, ``"en"`` or ``"zh"``) the segments in that language. Errors name ``label:line``."""
    docs: list[SgmDocument] = []
    doc_ids = FirstSeen(label, "document id")
    seg_ids = FirstSeen(label, "segment id")
    check = LanguageCheck(label, language, "segment") if language else None
    for number, line in enumerate(split_lines(text), start=1):
        doc = _SGM_DOC.search(line)
        if doc:
            doc_ids.add(doc.group(1), number)
            docs.append(SgmDocument(doc.group(1), number))
            seg_ids = FirstSeen(label, f"segment id in document {doc.group(1)!r},")
            continue
        seg = _SGM_SEG.search(line)
        if seg:
            if not docs:
                raise MalformedInputError(label, number, "<seg> outside any <doc>")
            seg_ids.add(seg.group(1), number)
            segment = " ".join(html.unescape(seg.group(2)).split())
            if check is not None:
                check.add(segment, number)
            docs[-1].segments.append((seg.group(1), segment, number))
        elif "<seg" in line.lower():
            raise MalformedInputError(label, number, "unparsable <seg> line")
    if not docs:
        raise MalformedInputError(label, None, "no <doc docid=...> element: not a WMT SGML file, or empty")
    if check is not None:
        check.finish()
    return docs


def parse_wmt_sgm(text: str, label: str, language: str | None = None) -> list[tuple[str, list[tuple[str, str]]]]:
    """``[(docid, [(seg_id, text), ...]), ...]`` of a WMT SGML (``.sgm``) file, in file order
    (checked as ``read_sgm_documents`` says)."""
    return [(doc.docid, [(seg_id, text) for seg_id, text, _ in doc.segments])
            for doc in read_sgm_documents(text, label, language)]


def align_wmt_sgm(source_text: str, reference_text: str, source_label: str,
                  reference_label: str) -> list[tuple[str, list[ParallelPair]]]:
    """Pair a WMT source (English) and reference (Chinese) SGML by document id and segment id.

    Both files must hold the same documents with the same segment ids (a count mismatch names
    the document's line and the ids that differ). A segment empty on either side is left out,
    and the number left out is logged."""
    source_docs = read_sgm_documents(source_text, source_label, "en")
    reference_docs = read_sgm_documents(reference_text, reference_label, "zh")
    reference = {doc.docid: doc for doc in reference_docs}
    source_ids = {doc.docid for doc in source_docs}
    extra = [doc for doc in reference_docs if doc.docid not in source_ids]
    if extra:
        raise MalformedInputError(reference_label, extra[0].line, f"document {extra[0].docid!r} is not in "
                                                                  f"{source_label} ({len(extra)} such document(s))")
    out, empty = [], 0
    for doc in source_docs:
        if doc.docid not in reference:
            raise MalformedInputError(source_label, doc.line, f"document {doc.docid!r} is not in {reference_label}")
        ref = reference[doc.docid]
        targets = {seg_id: text for seg_id, text, _ in ref.segments}
        ids = [seg_id for seg_id, _, _ in doc.segments]
        if set(targets) != set(ids):
            missing, added = [i for i in ids if i not in targets], [i for i in targets if i not in set(ids)]
            raise MalformedInputError(reference_label, ref.line,
                                      f"document {doc.docid!r} has {len(targets)} segments, {len(ids)} in "
                                      f"{source_label}; missing ids {missing[:5]}, extra ids {added[:5]}")
        pairs = []
        for n, (seg_id, en, _) in enumerate(doc.segments):
            if en and targets[seg_id]:
                pairs.append(ParallelPair(doc.docid, n, en, targets[seg_id]))
            else:
                empty += 1
        out.append((doc.docid, pairs))
    if empty:
        log.warning("%s / %s: left out %d segment(s) empty on one side", source_label, reference_label, empty)
    return out


def read_wmt_sgm_files(source_path: str | os.PathLike,
                       reference_path: str | os.PathLike) -> list[tuple[str, list[ParallelPair]]]:
    def read(path):
        return decode_text(Path(path).read_bytes(), path)

    return align_wmt_sgm(read(source_path), read(reference_path), str(source_path), str(reference_path))


def read_wmt19_dev(tgz_path: str | os.PathLike,
                   sets: Sequence[tuple[str, str, str]] = WMT19_DEV_SETS) -> list[tuple[str, str, list[ParallelPair]]]:
    """``(set_name, docid, pairs)`` of the en-zh dev sets inside the WMT19 ``dev.tgz``.

    A missing member, a member that is not UTF-8 or holds a control character (``multivec.io.decode_text``)
    and a truncated or corrupt archive raise ``MalformedInputError`` naming the archive (and member and line)."""
    if not Path(tgz_path).is_file():
        raise FileNotFoundError(f"{tgz_path}: no such file (the WMT19 dev tarball)")
    texts: dict[str, str] = {}
    try:
        with tarfile.open(tgz_path) as archive:
            names = set(archive.getnames())
            for set_name, source_member, reference_member in sets:
                for member in (source_member, reference_member):
                    if member not in names:
                        raise MalformedInputError(tgz_path, None, f"no member {member!r} (needed for {set_name})")
                    raw = archive.extractfile(member).read()
                    try:
                        text = raw.decode("utf-8")
                    except UnicodeDecodeError as err:
                        raise MalformedInputError(tgz_path, None, f"member {member}: not valid UTF-8 ({err.reason} "
                                                                  f"at byte {err.start})") from None
                    texts[member] = decode_text(text, f"{tgz_path}:{member}")
    except (tarfile.TarError, EOFError, OSError, zlib.error) as err:
        raise MalformedInputError(tgz_path, None, f"truncated or corrupt tar archive ({err})") from None
    out = []
    for set_name, source_member, reference_member in sets:
        for docid, pairs in align_wmt_sgm(texts[source_member], texts[reference_member],
                                          f"{tgz_path}:{source_member}", f"{tgz_path}:{reference_member}"):
            out.append((set_name, docid, pairs))
    return out


# ---------------------------------------------------------------- packing

@dataclass
class TranslationDocument:
    id: str
    corpus: str
    doc: str
    pairs: list[ParallelPair]
    n_source_tokens: int  # as the model tokenizes the source, special tokens included
    source_sentence_ends: list[int] = field(default_factory=list)

    @property
    def source(self) -> str:
        return " ".join(p.en for p in self.pairs)

    @property
    def target(self) -> str:
        return join_chinese([p.zh for p in self.pairs])

    def row(self) -> dict:
        return {"id": self.id, "source": self.source, "target": self.target,
                "source_sentence_ends": self.source_sentence_ends or sentence_ends([p.en for p in self.pairs])}


def pair_sentence_ends(pairs: Sequence[ParallelPair], split_sentences: Callable[[str], list[str]] | None) -> list[int]:
    """Sentence ends in the joined English side of ``pairs``: each pair's own sentences (found by
    ``split_sentences``; None: a pair is one sentence), and every pair boundary."""
    ends: list[int] = []
    offset = 0
    for pair in pairs:
        inner = locate_sentences(pair.en, split_sentences(pair.en)) if split_sentences else [len(pair.en)]
        ends.extend(offset + end for end in inner)
        offset += len(pair.en) + 1
    return ends


def pack_pair_streams(streams: Iterable[tuple[str, str, list[ParallelPair]]],
                      count_tokens: Callable[[Sequence[str]], list[int]], max_tokens: int,
                      stats: TranslationStats | None = None, *,
                      count_target_tokens: Callable[[Sequence[str]], list[int]] | None = None,
                      max_target_tokens: int | None = None,
                      split_sentences: Callable[[str], list[str]] | None = None) -> list[TranslationDocument]:
    """Pack each stream ``(corpus, doc, pairs)`` into documents whose English side fits ``max_tokens``
    (special tokens included when ``count_tokens`` is a ``TokenCounter``, as the model tokenizes it).

    With ``count_target_tokens`` and ``max_target_tokens`` the Chinese side must fit the target
    limit too (a pair too long on either side is skipped). ``split_sentences`` finds the
    sentence ends inside each pair's English side for ``source_sentence_ends``.
    """
    stats = stats if stats is not None else TranslationStats()
    check_target = count_target_tokens is not None and max_target_tokens is not None
    budget, whole = text_budget(count_tokens, max_tokens), whole_counter(count_tokens)
    if check_target:
        target_budget, target_whole = text_budget(count_target_tokens, max_target_tokens), \
            whole_counter(count_target_tokens)
    documents: list[TranslationDocument] = []
    skipped_here = 0
    for number, (corpus, doc, pairs) in enumerate(tqdm(streams, desc="packing MT documents", leave=False)):
        stats.streams += 1
        stats.pairs += len(pairs)
        if not pairs:
            continue
        english = [p.en for p in pairs]
        chinese = [p.zh for p in pairs]

        def sources(groups):
            return [" ".join(english[i] for i in g) for g in groups]

        if check_target:
            lengths = list(zip(count_tokens(english), count_target_tokens(chinese)))
            groups, skipped = pack_lengths(lengths, (budget, target_budget))
            stats.skipped_long_targets += sum(1 for i in skipped if lengths[i][1] > target_budget)

            def excess(groups):  # > 0 where either side of the joined document is over its limit
                targets = target_whole([join_chinese([chinese[i] for i in g]) for g in groups])
                return [max(s - max_tokens, t - max_target_tokens) for s, t in zip(whole(sources(groups)), targets)]

            groups = enforce_limit(groups, excess, 0)
        else:
            groups, skipped = pack_lengths(count_tokens(english), budget)
            groups = enforce_limit(groups, lambda gs: whole(sources(gs)), max_tokens)
        stats.skipped_long_pairs += len(skipped)
        skipped_here += len(skipped)
        totals = whole(sources(groups))
        for k, (group, total) in enumerate(zip(groups, totals)):
            members = [pairs[i] for i in group]
            documents.append(TranslationDocument(f"{corpus}/{number:04d}-{slug(doc)}/{k:03d}", corpus, doc,
                                                 members, total, pair_sentence_ends(members, split_sentences)))
            stats.source_tokens.append(total)
    stats.documents += len(documents)
    if skipped_here:
        target = f" or Chinese side longer than {max_target_tokens} target tokens" if check_target else ""
        log.warning("skipped %d pairs whose English side is longer than %d tokens%s (never truncated)",
                    skipped_here, max_tokens, target)
    return documents


def debian_reference_streams(pairs_path: str | os.PathLike, corpus: str = "debian-reference",
                             warnings: list[str] | None = None) -> list[tuple[str, str, list[ParallelPair]]]:
    """One stream per chapter of the Debian Reference pairs, in book order (``warnings``: a copy of the
    registered file that shrank, see ``read_debian_reference_pairs``)."""
    streams: dict[str, list[ParallelPair]] = {}
    for pair in read_debian_reference_pairs(pairs_path, warnings):
        streams.setdefault(pair.doc, []).append(pair)
    return [(corpus, doc, pairs) for doc, pairs in streams.items()]


def _target_counter(target_tokenizer) -> TokenCounter | None:
    return None if target_tokenizer is None else TokenCounter(target_tokenizer, target=True)


def _check_split(name: str, train: list, dev: list, inputs, min_documents: int | None, stats: TranslationStats) -> None:
    check_minimum(f"{name} training documents", len(train), None, inputs)
    check_minimum(f"{name} documents", len(train) + len(dev), min_documents, inputs, stats.warnings)


def build_translation_corpus_debian(pairs_path: str | os.PathLike, tokenizer, max_tokens: int = 128, *,
                                    dev_size: int | None = None, dev_fraction: float | None = None,
                                    seed: int = 0, max_documents: int | None = None,
                                    stats: TranslationStats | None = None,
                                    target_tokenizer=None, max_target_tokens: int | None = None,
                                    split_sentences: Callable[[str], list[str]] | None = None,
                                    min_documents: int | None = None) -> tuple[list[dict], list[dict]]:
    """MT rows ``(train, dev)`` from the Debian Reference pairs (demo scale).

    ``tokenizer`` must tokenize as the model does (special tokens are counted against
    ``max_tokens``); ``target_tokenizer``/``max_target_tokens`` bound the Chinese side too when
    the target vocabulary is known before training. ``split_sentences`` (e.g. punkt) finds
    the sentence ends inside each paragraph pair. Zero documents raise; fewer than
    ``min_documents`` log a warning (kept in ``stats.warnings``).
    """
    stats = stats if stats is not None else TranslationStats()
    documents = pack_pair_streams(debian_reference_streams(pairs_path, warnings=stats.warnings), TokenCounter(tokenizer), max_tokens, stats,
                                  count_target_tokens=_target_counter(target_tokenizer),
                                  max_target_tokens=max_target_tokens, split_sentences=split_sentences)
    check_minimum("translation documents", len(documents), None, pairs_path)
    train, dev = deterministic_split(documents, [d.id for d in documents], dev_size=dev_size,
                                     dev_fraction=dev_fraction, seed=seed, max_documents=max_documents)
    _check_split("translation", train, dev, pairs_path, min_documents, stats)
    stats.train_documents, stats.dev_documents = len(train), len(dev)
    log.info("translation corpus (debian_reference): %s; %d train / %d dev documents",
             stats.summary(), len(train), len(dev))
    return [d.row() for d in train], [d.row() for d in dev]


def build_translation_corpus_wmt(train_path: str | os.PathLike, dev_path: str | os.PathLike, tokenizer,
                                 max_tokens: int = 128, *, max_documents: int | None = None,
                                 dev_size: int | None = None, seed: int = 0,
                                 stats: TranslationStats | None = None,
                                 target_tokenizer=None, max_target_tokens: int | None = None,
                                 split_sentences: Callable[[str], list[str]] | None = None,
                                 min_documents: int | None = None) -> tuple[list[dict], list[dict]]:
    """MT rows ``(train, dev)`` from News Commentary v14 en-zh and the WMT19 dev tarball (paper scale).

    ``max_documents`` caps the training documents and ``dev_size`` the dev documents
    (both chosen by hash order, kept in file order); ``None`` keeps all. The other
    keywords are those of ``build_translation_corpus_debian``.
    """
    stats = stats if stats is not None else TranslationStats()
    count, count_target = TokenCounter(tokenizer), _target_counter(target_tokenizer)
    packing = dict(count_target_tokens=count_target, max_target_tokens=max_target_tokens,
                   split_sentences=split_sentences)
    train_streams = (("news-commentary-v14", doc, pairs) for doc, pairs in read_news_commentary_tsv(train_path, stats))
    train_docs = pack_pair_streams(train_streams, count, max_tokens, stats, **packing)
    check_minimum("training documents", len(train_docs), None, train_path)
    dev_docs = pack_pair_streams(((f"wmt19-dev-{name}", docid, pairs) for name, docid, pairs in read_wmt19_dev(dev_path)),
                                 count, max_tokens, stats, **packing)
    check_minimum("dev documents", len(dev_docs), None, dev_path)
    train, _ = deterministic_split(train_docs, [d.id for d in train_docs], dev_size=0, seed=seed,
                                   max_documents=max_documents)
    dev, _ = deterministic_split(dev_docs, [d.id for d in dev_docs], dev_size=0, seed=seed, max_documents=dev_size)
    _check_split("translation", train, dev, [train_path, dev_path], min_documents, stats)
    stats.train_documents, stats.dev_documents = len(train), len(dev)
    log.info("translation corpus (wmt19_enzh): %s; %d train / %d dev documents", stats.summary(), len(train), len(dev))
    return [d.row() for d in train], [d.row() for d in dev]

