"""WikiText articles and sections (Merity et al. 2016), for NUGGET's passage reranking (§6.1, App. A).

WikiText keeps Wikipedia's heading structure as lines of their own:

    `` = Title = ``              a new article
    `` = = Heading = = ``        a new section of the current article
    `` = = = Sub = = = ``        a subsection (or deeper): stays in its section

The text before an article's first ``= =`` heading is its first section (heading ``""``).
Heading lines are not part of any section's text; a section's text is its paragraphs
(non-blank lines, stripped) joined with ``"\\n"``. Sections whose text is empty (a heading
directly followed by another heading of the same level) are left out. The same parser reads
the tokenised variant (``wiki.valid.tokens``, ``<unk>``, `` @-@ ``) and the raw one
(``wiki.train.raw``); it streams the file, so WikiText-103 train fits in memory as text.

Real text from the tokenised variant: the paper builds RR from *raw* WikiText-103, which
has no ``<unk>`` (App. A). Where only the tokenised variant exists (the demo mirror's WikiText-2),
``read_wikitext`` detokenises it (``detokenize_wikitext``): `` @-@ ``/`` @,@ ``/`` @.@ `` joiners,
spaces before closing punctuation and after opening brackets and currency signs, clitics
(`` 's``, `` n't``), and double quotes paired within a paragraph; and it maps every ``<unk>`` to the
reading tokenizer's one unknown token (MiniLM's ``[UNK]``), which a tokenizer keeps as one token;
left as ``<unk>`` it becomes 4 WordPieces (``<``, ``un``, ``##k``, ``>``) of text that was never
there. No detokenisation restores the masked word: the share of unknown tokens is measured and
reported (``multivec.data.unknown_tokens``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from multivec.data.language import LanguageCheck
from multivec.io import MalformedInputError, iter_lines

TITLE_LINE = re.compile(r"=\s(?!=)(.*?)\s=")           # "= Title =" after strip
SECTION_LINE = re.compile(r"=\s=\s(?!=)(.*?)\s=\s=")   # "= = Heading = ="
DEEPER_LINE = re.compile(r"=\s=\s=\s(.*?)\s=\s=\s=")   # "= = = Sub = = =" and deeper

UNKNOWN = "<unk>"  # the tokenised variant's mask for a word outside its vocabulary
TOKENIZED_MARKS = (" @-@ ", " @,@ ", " @.@ ", " <unk> ")  # present in the tokenised variant, never in the raw one


@dataclass
class Section:
    heading: str  # "" for the text before an article's first heading
    text: str


@dataclass
class Article:
    title: str
    sections: list[Section] = field(default_factory=list)


def parse_wikitext(path: str | os.PathLike, warnings: list[str] | None = None) -> list[Article]:
    """Split a WikiText file into articles and their sections (see the module docstring).

    Raises ``MalformedInputError`` (file:line) for text before the first article title, and for a
    file that is not English (``multivec.data.language.LanguageCheck`` over its paragraphs). A copy of a
    registered file (WikiText-2 valid/test) whose articles, sections or lines differ from the registered
    counts warns, or stops when it shrank below half (``multivec.data.sources.check_registered_counts``;
    the warning is appended to ``warnings``).
    """
    from multivec.data.sources import check_registered_counts

    articles: list[Article] = []
    lines = 0
    language = LanguageCheck(path, "en", "WikiText")
    heading: str | None = None
    paragraphs: list[str] = []

    def close_section():
        if articles and heading is not None:
            text = "\n".join(paragraphs)
            if text:
                articles[-1].sections.append(Section(heading, text))

    for number, line in iter_lines(path):
        lines = number
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("="):
            if DEEPER_LINE.fullmatch(stripped):
                continue  # a subsection's text stays in the enclosing section
            section = SECTION_LINE.fullmatch(stripped)
            if section:
                if not articles:
                    raise MalformedInputError(path, number, "section heading before the first article title")
                close_section()
                heading, paragraphs = section.group(1).strip(), []
                continue
            title = TITLE_LINE.fullmatch(stripped)
            if title:
                close_section()
                articles.append(Article(title.group(1).strip()))
                heading, paragraphs = "", []
                continue
        if not articles:
            raise MalformedInputError(path, number, "text before the first article title (' = Title = ')")
        language.add(stripped, number)
        paragraphs.append(stripped)
    close_section()
    check_registered_counts(path, {"articles": len(articles), "sections": sum(len(a.sections) for a in articles),
                                   "lines": lines}, warnings)
    language.finish()
    return articles


# ---------------------------------------------------------------- detokenisation

_WT_JOINER = re.compile(r" @([^ ])@ ")
_WT_SPACE_BEFORE = re.compile(r" ([,.;:!?%)\]}])")
_WT_SPACE_AFTER = re.compile(r"([(\[{$£€]) ")
_WT_CLITIC = re.compile(r" (n't|'s|'re|'ve|'m|'ll|'d)\b", re.IGNORECASE)
_WT_UNKNOWN = re.compile(r"<unk>")


def _pair_double_quotes(text: str) -> str:
    """Attach WikiText's spaced ``"`` to their words: odd ones open (``" x`` -> ``"x``), even ones close
    (``x "`` -> ``x"``); a paragraph with an odd number of them keeps its last one as it is."""
    words = text.split(" ")
    quotes = [i for i, w in enumerate(words) if w == '"']
    if len(quotes) % 2:
        quotes = quotes[:-1]
    out: list[str] = []
    opening = set(quotes[0::2])
    closing = set(quotes[1::2])
    attach_next = False
    for i, word in enumerate(words):
        if i in closing and out:
            out[-1] += '"'
            attach_next = False
            continue
        if attach_next:
            out[-1] += word
            attach_next = False
            continue
        out.append(word)
        if i in opening and i + 1 < len(words):
            attach_next = True
    return " ".join(out)


def detokenize_wikitext(text: str, unknown_token: str | None = None) -> str:
    """Undo WikiText's tokenisation: `` @-@ `` -> ``-`` (and ``@,@``, ``@.@``), `` , `` -> ``, ``,
    ``( x )`` -> ``(x)``, ``$ 5`` -> ``$5``, ``it 's`` -> ``it's``, ``" x "`` -> ``"x"``.

    ``unknown_token``: what each ``<unk>`` becomes (a tokenizer's unknown token, e.g. ``[UNK]``);
    None keeps ``<unk>``. Single quotes stay as they are (apostrophe or quote cannot be told apart).
    """
    text = " ".join(text.split())
    text = _WT_JOINER.sub(r"\1", text)
    text = _pair_double_quotes(text)
    text = _WT_SPACE_BEFORE.sub(r"\1", text)
    text = _WT_SPACE_AFTER.sub(r"\1", text)
    text = _WT_CLITIC.sub(r"\1", text)
    if unknown_token is not None:
        text = _WT_UNKNOWN.sub(lambda _: unknown_token, text)
    return text


def is_tokenized(path: str | os.PathLike, sample_lines: int = 2000) -> bool:
    """Whether a WikiText file is the tokenised variant: one of ``TOKENIZED_MARKS`` in its first lines."""
    for number, line in iter_lines(path):
        if any(mark in f" {line} " for mark in TOKENIZED_MARKS):
            return True
        if number >= sample_lines:
            break
    return False


def read_wikitext(path: str | os.PathLike, unknown_token: str | None = None,
                  tokenized: bool | None = None, warnings: list[str] | None = None) -> list[Article]:
    """``parse_wikitext``, then real text: a tokenised file's sections, titles and headings detokenised with
    every ``<unk>`` mapped to ``unknown_token`` (``detokenize_wikitext``). A raw file is returned as parsed.
    ``tokenized``: None = detect (``is_tokenized``); ``warnings``: as ``parse_wikitext``'s."""
    articles = parse_wikitext(path, warnings)
    if tokenized is None:
        tokenized = is_tokenized(path)
    if not tokenized:
        return articles

    def clean(text: str) -> str:
        return "\n".join(detokenize_wikitext(line, unknown_token) for line in text.split("\n"))

    return [Article(clean(a.title), [Section(clean(s.heading), clean(s.text)) for s in a.sections])
            for a in articles]
