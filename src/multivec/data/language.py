"""A cheap check that a file's texts are in the language its consumers expect (English or Chinese).

A wrong file (an en-de corpus registered as en-zh, a file in another language) or swapped
columns does not break a reader: it trains and scores a model on the wrong data. Every reader
of an external English or Chinese text feeds its texts to a ``LanguageCheck`` and calls
``finish`` at the end of the file:

- per text, each side is checked positively for its own script (a text with no letters at all,
  e.g. a number, counts neither way): English (``"en"``) must be mostly Latin letters (at least
  half of its letters; accented and full-width Latin count), so Russian, Greek, Arabic, Chinese
  or Japanese text fails, while an English sentence quoting a name in another script passes;
  Chinese (``"zh"``) must contain a CJK ideograph, must not be Japanese or Korean (kana or hangul
  more than a fifth as many as its ideographs) and must not hold more letters of another script
  (Cyrillic, Greek, Arabic, ...) than ideographs; Latin letters are allowed on the Chinese side
  (commands, names, acronyms). The message names the script the failing text is in;
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
import unicodedata

from multivec.io import MalformedInputError

log = logging.getLogger(__name__)

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# Latin letters: ASCII, Latin-1 and Latin Extended (not the signs x and /), Latin Extended Additional, full-width
LATIN = re.compile(r"[A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff\uff21-\uff3a\uff41-\uff5a]")
# Japanese kana (hiragana, katakana, half-width katakana) and Korean hangul (jamo, compatibility jamo, syllables)
KANA_HANGUL = re.compile(r"[\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f\u1100-\u11ff\u3130-\u318f"
                         r"\uac00-\ud7af]")
LETTER = re.compile(r"[^\W\d_]")
WORD = re.compile(r"[^\W\d_]+")
ENGLISH_FUNCTION_WORDS = frozenset("the of and to in a is that for it was on with as by be are this from or at an "
                                   "his he which were not but have has had".split())
MIN_FUNCTION_WORD_SHARE = 0.12
LANGUAGES = {"en": "English", "zh": "Chinese"}


def _not_latin(char: str) -> bool:
    return not LATIN.fullmatch(char)


_SCRIPT_NAMES = {"CJK": "CJK (Chinese) characters", "HIRAGANA": "Japanese kana", "KATAKANA": "Japanese kana",
                 "HALFWIDTH": "Japanese kana", "HANGUL": "Korean hangul"}


def _script(text: str, counted) -> str:
    """The script most of the letters of ``text`` that ``counted`` accepts are in, e.g. ``Cyrillic letters``."""
    scripts: dict[str, int] = {}
    for char in LETTER.findall(text):
        if counted(char):
            script = unicodedata.name(char, "UNKNOWN").split()[0]
            scripts[script] = scripts.get(script, 0) + 1
    if not scripts:
        return "letters of no known script"
    script = max(scripts, key=scripts.get)
    return _SCRIPT_NAMES.get(script, f"{script.title()} letters")


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
        self.first_reason = ""  # what is wrong with the first failing text
        self.n_wrong = 0
        self.words = self.function_words = 0

    def wrong_text(self, text: str) -> bool:
        return self.reason(text) is not None

    def reason(self, text: str) -> str | None:
        """Why ``text`` is not in the check's language (``None``: it is, or it has no letters)."""
        letters = len(LETTER.findall(text))
        if not letters:
            return None
        latin = len(LATIN.findall(text))
        if self.language == "en":
            # English may quote a name in another script ("Tokyo (東京) is ..."): wrong when Latin letters are
            # fewer than half of its letters
            return None if 2 * latin >= letters else f"is mostly {_script(text, _not_latin)}, not Latin letters"
        ideographs = len(CJK.findall(text))
        if not ideographs:
            return "has no Chinese characters" + (f" (mostly {_script(text, _not_latin)})" if latin < letters else "")
        kana = len(KANA_HANGUL.findall(text))
        if 5 * kana > ideographs:
            return f"is Japanese or Korean ({kana} {_script(text, KANA_HANGUL.fullmatch)} to {ideographs} ideographs)"
        other = letters - ideographs - latin - kana
        if other > ideographs:
            return (f"is mostly {_script(text, lambda c: not (CJK.fullmatch(c) or LATIN.fullmatch(c)))}, "
                    f"not Chinese characters")
        return None

    def add(self, text: str, line: int | str | None = None) -> None:
        """Count one text (``line``: where it is, a line number or an archive member, for the message)."""
        if not LETTER.search(text):
            return
        self.texts += 1
        reason = self.reason(text)
        if reason is not None:
            if not self.n_wrong:
                self.first_reason = reason
            self.n_wrong += 1
            if len(self.wrong) < 5:
                self.wrong.append((line, text))
        if self.language == "en" and self.words < self.sample_words:
            words = WORD.findall(text.lower())
            self.words += len(words)
            self.function_words += sum(word in ENGLISH_FUNCTION_WORDS for word in words)

    def _what_is_wrong(self) -> str:
        return self.first_reason

    def finish(self) -> None:
        """Raise when the file is not in its language; log a WARNING when a few texts are not."""
        name = LANGUAGES[self.language]
        if self.n_wrong:
            line, text = self.wrong[0]
            lines = ", ".join(str(n) for n, _ in self.wrong if n is not None)
            summary = (f"{self.n_wrong} of {self.texts} {self.side} texts are not {name} (the first "
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
