"""A cheap check that a file's texts are in the language its consumers expect (English or Chinese).

A wrong file (an en-de corpus registered as en-zh, a file in another language) or swapped
columns does not break a reader: it trains and scores a model on the wrong data. Every reader
of an external English or Chinese text feeds its texts to a ``LanguageCheck`` and calls
``finish`` at the end of the file:

- per text, Chinese (``"zh"``) must contain a CJK ideograph (a text with no letters at all,
  e.g. a number, counts neither way); English (``"en"``) must not hold more ideographs than
  Latin letters;
- per file, when more than ``max_wrong_share`` of the texts fail, the file is refused
  (``MalformedInputError`` naming the file and the first failing line); when some fail but
  fewer, a WARNING gives their count and first lines (real corpora hold a few untranslated
  names or code lines);
- English also has to read as English: over the first ``sample_words`` words, common English
  function words (the, of, and, ...) make about 25-30 % of English text (measured on
  WikiText-2, gensim's Wikipedia sample and Lee corpus, the Debian Reference: 27-32 %) and
  under 5 % of German, French or Spanish; a file of at least ``min_words`` words below
  ``MIN_FUNCTION_WORD_SHARE`` is refused.
"""

from __future__ import annotations

import logging
import os
import re

from multivec.io import MalformedInputError

log = logging.getLogger(__name__)

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
LATIN = re.compile(r"[A-Za-z]")
LETTER = re.compile(r"[^\W\d_]")
WORD = re.compile(r"[^\W\d_]+")
ENGLISH_FUNCTION_WORDS = frozenset("the of and to in a is that for it was on with as by be are this from or at an "
                                   "his he which were not but have has had".split())
MIN_FUNCTION_WORD_SHARE = 0.12
LANGUAGES = {"en": "English", "zh": "Chinese"}


class LanguageCheck:
    """Counts the texts of one side of one file that are not in ``language`` (see the module docstring)."""

    def __init__(self, path: str | os.PathLike, language: str, side: str = "text", *,
                 max_wrong_share: float = 0.2, min_words: int = 1000, sample_words: int = 200_000):
        if language not in LANGUAGES:
            raise ValueError(f"language must be one of {', '.join(LANGUAGES)}, not {language!r}")
        self.path, self.language, self.side = path, language, side
        self.max_wrong_share, self.min_words, self.sample_words = max_wrong_share, min_words, sample_words
        self.texts = 0
        self.wrong: list[tuple[int | str | None, str]] = []  # (line or member, text) of the first failing texts
        self.n_wrong = 0
        self.words = self.function_words = 0

    def wrong_text(self, text: str) -> bool:
        if self.language == "zh":
            return not CJK.search(text) and bool(LETTER.search(text))
        # English may quote a name in Chinese ("Tokyo (東京) is ..."): wrong when ideographs outnumber Latin letters
        return bool(CJK.search(text)) and len(CJK.findall(text)) > len(LATIN.findall(text))

    def add(self, text: str, line: int | str | None = None) -> None:
        """Count one text (``line``: where it is, a line number or an archive member, for the message)."""
        if not LETTER.search(text):
            return
        self.texts += 1
        if self.wrong_text(text):
            self.n_wrong += 1
            if len(self.wrong) < 5:
                self.wrong.append((line, text))
        if self.language == "en" and self.words < self.sample_words:
            words = WORD.findall(text.lower())
            self.words += len(words)
            self.function_words += sum(word in ENGLISH_FUNCTION_WORDS for word in words)

    def _what_is_wrong(self) -> str:
        return "has no Chinese characters" if self.language == "zh" else "is mostly Chinese characters"

    def finish(self) -> None:
        """Raise when the file is not in its language; log a WARNING when a few texts are not."""
        name = LANGUAGES[self.language]
        if self.n_wrong:
            line, text = self.wrong[0]
            lines = ", ".join(str(n) for n, _ in self.wrong if n is not None)
            summary = (f"{self.n_wrong} of {self.texts} {self.side} texts are not {name} (the text "
                       f"{self._what_is_wrong()})")
            if self.n_wrong > self.max_wrong_share * self.texts:
                raise MalformedInputError(self.path, line, f"{self.side} is not {name}: {summary}, e.g. "
                                                           f"{text[:60]!r}; a wrong file or swapped columns?")
            log.warning("%s: %s, e.g. line(s) %s", self.path, summary, lines or "?")
        if self.language == "en" and self.words >= self.min_words:
            share = self.function_words / self.words
            if share < MIN_FUNCTION_WORD_SHARE:
                raise MalformedInputError(self.path, None, f"{self.side} does not read as English: common English "
                                                           f"function words are {share:.1%} of its first "
                                                           f"{self.words} words (English text: 25-30 %, at least "
                                                           f"{MIN_FUNCTION_WORD_SHARE:.0%} required)")
