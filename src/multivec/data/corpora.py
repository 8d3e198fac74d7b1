"""Readers that yield English paragraphs with provenance, and sentence splitters.

Sources (``PARAGRAPH_READERS`` maps the config's corpus names to them):

- ``wikitext2``: WikiText articles via ``multivec.data.wikitext.parse_wikitext``, one
  ``Paragraph`` per paragraph line of each section. WikiText-2 is the tokenised variant
  (``<unk>``, `` @-@ ``, spaces around punctuation); ``multivec.data.wikitext.detokenize_wikitext``
  undoes the tokenisation and here leaves ``<unk>`` in place (no guess can restore the word).
- ``gensim_enwiki``: the 106-article Wikipedia dump excerpt in gensim's wheel, via
  gensim's ``extract_pages`` + ``filter_wiki``; the remaining markup residue (bold and
  italic quotes, headings, list items, table rows) is dropped, and so are reference
  sections, redirect pages and very short pages, with their counts logged.
- ``debian_reference``: the English side of the Debian Reference pairs (``doc``, ``i``,
  ``en``, ``zh``), one paragraph a pair.
- ``wmt19_enzh``: the English side of News Commentary v14 en-zh (paper scale), one
  paragraph per document, its sentences as given (already one a line).

English sentences come from NLTK's punkt (``punkt_tab``, via ``sent_tokenize``);
Chinese text is split after the sentence-final marks 。！？ (and !/? ), keeping closing
quotes and brackets with the sentence they close.
"""

from __future__ import annotations

import bz2
import logging
import os
import re
from pathlib import Path
from typing import Callable, Iterator

from tqdm import tqdm

from multivec.data.language import LanguageCheck
from multivec.data.news_commentary import read_news_commentary_tsv
from multivec.data.records import Paragraph, ParallelPair
from multivec.data.wikitext import detokenize_wikitext, parse_wikitext
from multivec.io import EmptyOutputError, FirstSeen, MalformedInputError, check_fields, iter_jsonl

log = logging.getLogger(__name__)


# ---------------------------------------------------------------- sentence splitting

def english_sentence_splitter(mirror: str | os.PathLike | None = None) -> Callable[[str], list[str]]:
    """NLTK punkt (punkt_tab/english) sentence splitter; finds the data in ``<mirror>/nltk_data``. The model is
    loaded here, so missing or incomplete data stops at once naming the resource, ``$NLTK_DATA`` and the
    mirror's nltk_data folder (``multivec.data.nltk_resources.NltkResourceError``)."""
    from nltk.tokenize import sent_tokenize

    from multivec.data.nltk_resources import load_nltk_resource

    load_nltk_resource("tokenizers/punkt_tab/english", lambda: sent_tokenize("Loaded.", language="english"), mirror)

    def split(text: str) -> list[str]:
        return [s.strip() for s in sent_tokenize(text, language="english") if s.strip()]

    return split


_ZH_END = "。！？!?"
_ZH_CLOSE = "”’」』）)》\"'"
_ZH_SENTENCE = re.compile(rf"[^{re.escape(_ZH_END)}]*[{re.escape(_ZH_END)}]+[{re.escape(_ZH_CLOSE)}]*|[^{re.escape(_ZH_END)}]+$")


def split_chinese_sentences(text: str) -> list[str]:
    """Split Chinese text after 。！？!? (closing quotes/brackets stay with their sentence)."""
    return [s.strip() for s in _ZH_SENTENCE.findall(text.strip()) if s.strip()]


def join_chinese(parts: list[str]) -> str:
    """Join Chinese segments without spaces, except where both neighbouring characters are ASCII."""
    out = ""
    for part in parts:
        part = part.strip()
        if not part:
            continue
        if out and out[-1].isascii() and part[0].isascii():
            out += " "
        out += part
    return out


# ---------------------------------------------------------------- WikiText

def wikitext_paragraphs(path: str | os.PathLike, corpus: str | None = None,
                        detokenize: bool = True, warnings: list[str] | None = None) -> Iterator[Paragraph]:
    """Paragraphs of a WikiText file (one per paragraph line of each section; ``<unk>`` kept).
    ``warnings``: see ``parse_wikitext`` (a copy of a registered file that shrank)."""
    path = Path(path)
    corpus = corpus or f"wikitext-{path.stem}"
    articles = parse_wikitext(path, warnings)
    for article in tqdm(articles, desc=f"paragraphs {corpus}", leave=False):
        index = 0
        for section in article.sections:
            for line in section.text.split("\n"):
                text = detokenize_wikitext(line) if detokenize else " ".join(line.split())
                if not text:
                    continue
                yield Paragraph(text, corpus, article.title, section.heading or "", index)
                index += 1


# ---------------------------------------------------------------- Wikipedia dump (gensim)

ENWIKI_TEST_DUMP = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
MIN_PAGE_WORDS = 50  # pages with fewer words of prose (stubs, disambiguation) are skipped
MIN_PARAGRAPH_WORDS = 8  # shorter lines are captions, list intros or markup residue
NON_PROSE_SECTIONS = {"references", "external links", "see also", "notes", "bibliography", "further reading",
                      "sources", "footnotes", "citations", "notes and references", "works cited"}
_HEADING = re.compile(r"^(=+)\s*(.*?)\s*\1$")
_EMPTY_BRACKETS = re.compile(r"\(\s*[,;:]?\s*\)")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:])")


def _clean_wiki_line(line: str) -> str:
    line = line.replace("'''", "").replace("''", "")
    line = _EMPTY_BRACKETS.sub("", line)
    line = " ".join(line.split())
    return _SPACE_BEFORE_PUNCT.sub(r"\1", line)


def wiki_markup_paragraphs(markup: str) -> tuple[list[tuple[str, str]], int]:
    """Prose paragraphs ``(section, text)`` of one page's wiki markup, and the count of dropped lines."""
    from gensim.corpora.wikicorpus import filter_wiki

    paragraphs, dropped = [], 0
    section = ""
    for raw in filter_wiki(markup).splitlines():
        line = raw.strip()
        if not line:
            continue
        heading = _HEADING.match(line)
        if heading:
            section = heading.group(2)
            continue
        if section.lower() in NON_PROSE_SECTIONS or line[0] in "*#:;|{}!":
            dropped += 1
            continue
        text = _clean_wiki_line(line)
        if not text or text[0] in "*#:;|{}!" or text.endswith(":") or len(text.split()) < MIN_PARAGRAPH_WORDS:
            dropped += 1
            continue
        paragraphs.append((section, text))
    return paragraphs, dropped


def enwiki_dump_paragraphs(path: str | os.PathLike, corpus: str = "gensim-enwiki") -> Iterator[Paragraph]:
    """Prose paragraphs of a (bz2) Wikipedia XML dump, main namespace; skips are logged.

    A truncated or corrupt dump (bz2 stream, XML) raises ``MalformedInputError`` naming the file
    and the last page read; a dump that is not English is refused (``LanguageCheck``)."""
    from xml.etree.ElementTree import ParseError

    from gensim.corpora.wikicorpus import extract_pages

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file (a Wikipedia XML dump)")
    opener = bz2.open if path.suffix == ".bz2" else open
    redirects = short = pages = kept = dropped_lines = 0
    language = LanguageCheck(path, "en", "Wikipedia dump")
    title = None
    try:
        with opener(path, "rb") as handle:
            for title, markup, _page_id in tqdm(extract_pages(handle, filter_namespaces=("0",)),
                                                desc=f"pages {corpus}", leave=False):
                pages += 1
                if markup.lstrip()[:9].lower() == "#redirect":
                    redirects += 1
                    continue
                paragraphs, dropped = wiki_markup_paragraphs(markup)
                dropped_lines += dropped
                if sum(len(text.split()) for _, text in paragraphs) < MIN_PAGE_WORDS:
                    short += 1
                    continue
                kept += 1
                for index, (section, text) in enumerate(paragraphs):
                    language.add(text)
                    yield Paragraph(text, corpus, title, section, index)
    except (EOFError, OSError, ParseError) as err:
        after = f" after page {pages} ({title!r})" if pages else " before the first page"
        raise MalformedInputError(path, None, f"truncated or corrupt Wikipedia dump{after}: {err}") from None
    language.finish()
    log.info("%s: %d pages, kept %d; skipped %d redirects and %d pages under %d words of prose; "
             "dropped %d non-prose lines (lists, tables, captions, reference sections)",
             path, pages, kept, redirects, short, MIN_PAGE_WORDS, dropped_lines)


# ---------------------------------------------------------------- Debian Reference pairs

def read_debian_reference_pairs(path: str | os.PathLike, warnings: list[str] | None = None) -> list[ParallelPair]:
    """The aligned pairs (``doc``, ``i``, ``en``, ``zh``), in book order: docs as they first
    appear, pairs by ``i`` within a doc. Malformed lines (a missing field, a wrong type, an
    empty side, a duplicate ``doc#i``) raise naming file and line, and so does a file whose
    ``en`` side is not English or whose ``zh`` side is not Chinese (``LanguageCheck``). A copy of the
    registered file with another number of pairs warns (appended to ``warnings``), or stops below half
    (``multivec.data.sources.check_registered_counts``)."""
    from multivec.data.sources import check_registered_counts

    pairs: list[ParallelPair] = []
    seen = FirstSeen(path, "pair")
    languages = {"en": LanguageCheck(path, "en", "en"), "zh": LanguageCheck(path, "zh", "zh")}
    for number, row in iter_jsonl(path):
        check_fields(row, {"doc": "string", "i": "integer", "en": "string", "zh": "string"}, path, number)
        en, zh = " ".join(row["en"].split()), row["zh"].strip()
        if not en or not zh:
            raise MalformedInputError(path, number, f"empty {'en' if not en else 'zh'} side of pair "
                                                    f"{row['doc']}#{row['i']}")
        seen.add(f"{row['doc']}#{row['i']}", number)
        languages["en"].add(en, number)
        languages["zh"].add(zh, number)
        pairs.append(ParallelPair(row["doc"], row["i"], en, zh))
    check_registered_counts(path, {"pairs": len(pairs)}, warnings)
    for check in languages.values():
        check.finish()
    if not pairs:
        raise EmptyOutputError(f"{path}: no sentence pairs (empty file)")
    doc_order = {doc: n for n, doc in enumerate(dict.fromkeys(p.doc for p in pairs))}
    return sorted(pairs, key=lambda p: (doc_order[p.doc], p.i))


def debian_reference_paragraphs(path: str | os.PathLike, corpus: str = "debian-reference-en",
                                warnings: list[str] | None = None) -> Iterator[Paragraph]:
    """English side of the Debian Reference pairs, one paragraph a pair (``warnings``: see
    ``read_debian_reference_pairs``)."""
    for pair in read_debian_reference_pairs(path, warnings):
        yield Paragraph(pair.en, corpus, pair.doc, "", pair.i)


# ---------------------------------------------------------------- WMT19 English side

def news_commentary_english_paragraphs(path: str | os.PathLike,
                                       corpus: str = "news-commentary-v14-en") -> Iterator[Paragraph]:
    """English side of News Commentary v14 en-zh: one paragraph per document, sentences as given."""
    for doc_id, pairs in read_news_commentary_tsv(path):
        sentences = tuple(p.en for p in pairs)
        yield Paragraph(" ".join(sentences), corpus, doc_id, "", 0, sentences)


# ---------------------------------------------------------------- registry

PARAGRAPH_READERS: dict[str, Callable[..., Iterator[Paragraph]]] = {
    "wikitext2": wikitext_paragraphs,
    "gensim_enwiki": enwiki_dump_paragraphs,
    "debian_reference": debian_reference_paragraphs,
    "wmt19_enzh": news_commentary_english_paragraphs,
}


def read_paragraphs(name: str, path: str | os.PathLike, warnings: list[str] | None = None) -> Iterator[Paragraph]:
    """Paragraphs of one file of the named corpus (a key of ``PARAGRAPH_READERS``). ``warnings`` receives the
    warning of a registered source's copy that shrank (``multivec.data.sources.check_registered_counts``)."""
    try:
        reader = PARAGRAPH_READERS[name]
    except KeyError:
        raise ValueError(f"unknown paragraph corpus {name!r}; known: {', '.join(PARAGRAPH_READERS)}") from None
    if name == "wikitext2":
        return reader(path, corpus=f"wikitext2-{Path(path).stem}", warnings=warnings)
    if name == "debian_reference":
        return reader(path, warnings=warnings)
    return reader(path)
