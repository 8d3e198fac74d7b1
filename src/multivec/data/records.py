"""The records every data module passes around: an English ``Paragraph`` with its provenance and an
aligned English -> Chinese ``ParallelPair``.

They sit below the readers (``corpora``, ``news_commentary``, ``wikitext``) and the builders
(``documents``, ``translation_corpus``), so that no data module needs to import one that imports it
(``tests/test_data_imports.py`` holds the import graph of ``multivec`` free of cycles).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Paragraph:
    """One English paragraph and where it comes from.

    ``corpus`` names the file it was read from (e.g. ``wikitext2-valid``), ``doc`` the
    article or chapter, ``section`` the heading it sits under (``""`` when none), and
    ``index`` its position in the doc. ``sentences`` is set when the source already
    comes split into sentences (WMT); otherwise the builder splits ``text``.
    """

    text: str
    corpus: str
    doc: str
    section: str = ""
    index: int = 0
    sentences: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ParallelPair:
    """An aligned English -> Chinese pair (a paragraph or a sentence) with provenance."""

    doc: str
    i: int
    en: str
    zh: str
