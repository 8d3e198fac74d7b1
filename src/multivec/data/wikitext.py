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


@dataclass
class Section:
    heading: str  # "" for the text before an article's first heading
    text: str


@dataclass
class Article:
    title: str
    sections: list[Section] = field(default_factory=list)


def parse_wikitext(path: str | os.PathLike) -> list[Article]:
    """Split a WikiText file into articles and their sections (see the module docstring).

    Raises ``MalformedInputError`` (file:line) for text before the first article title, and for a
    file that is not English (``multivec.data.language.LanguageCheck`` over its paragraphs).
    """
    articles: list[Article] = []
    language = LanguageCheck(path, "en", "WikiText")
    heading: str | None = None
    paragraphs: list[str] = []

    def close_section():
        if articles and heading is not None:
            text = "\n".join(paragraphs)
            if text:
                articles[-1].sections.append(Section(heading, text))

    for number, line in iter_lines(path):
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
    language.finish()
    return articles
