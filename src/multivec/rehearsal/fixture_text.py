"""Deterministic fixture text for the rehearsal: English sentences from WordNet 3.0's glosses (definitions and
usage examples, in the demo data mirror's ``nltk_data``), grouped into documents, and a pseudo-Chinese rendering
of any English sentence (each word mapped by a stable hash to a word of common Chinese characters), so every
language check of the readers sees the language it expects.

Each fixture source gets its own documents (``documents(name)``, slices of ``ALLOCATION``), and no word 8-gram
occurs in two sentences, so the overlap audit (rules/audit.smk) finds no train/test overlap that the real
sources would not have. Not gensim's Lee corpus: it is a distillation training source at paper scale, and
it holds near-duplicate articles.
"""

from __future__ import annotations

import os
import re
import zlib
from functools import lru_cache
from pathlib import Path

# Documents per fixture source, in this order (the slices never change when a later one grows).
ALLOCATION = {"news_commentary": 60, "wmt19_dev": 12, "parabank": 170, "wikitext103_train": 120,
              "wikitext103_valid": 20, "wikitext103_test": 20, "imdb": 50, "zhou2022": 40, "csts": 24}
SENTENCES_PER_DOCUMENT = 6
_HANZI = ("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小"
          "么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样"
          "现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位"
          "因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书")
_WORD = re.compile(r"[A-Za-z0-9']+")
_WORDNET_FILES = ("data.noun", "data.verb", "data.adj", "data.adv")


def wordnet_folder() -> Path:
    """``<mirror>/nltk_data/corpora/wordnet`` of ``$MULTIVEC_DATA_MIRROR`` or ``$NLTK_DATA``."""
    from multivec.io.resources import ResourceError

    candidates = [os.environ.get("NLTK_DATA")]
    if os.environ.get("MULTIVEC_DATA_MIRROR"):
        candidates.insert(0, str(Path(os.environ["MULTIVEC_DATA_MIRROR"]) / "nltk_data"))
    for folder in filter(None, candidates):
        path = Path(folder) / "corpora" / "wordnet"
        if (path / "data.noun").is_file():
            return path
    raise ResourceError("the rehearsal's fixture text is WordNet 3.0's glosses: set $MULTIVEC_DATA_MIRROR to the "
                        "demo data mirror (its nltk_data/corpora/wordnet) or $NLTK_DATA")


def _clean(text: str) -> str:
    text = " ".join(text.strip().strip('"').split())
    return text[:1].upper() + text[1:].rstrip(" .;:,") + "."


@lru_cache(maxsize=2)
def wordnet_sentences(folder: str | None = None) -> tuple[str, ...]:
    """Gloss definitions and examples of at least 6 words, in file order, none sharing a word 8-gram with an
    earlier one."""
    folder = Path(folder) if folder else wordnet_folder()
    seen: set[tuple[str, ...]] = set()
    out = []
    for name in _WORDNET_FILES:
        for line in (folder / name).read_text(encoding="utf-8").splitlines():
            if line.startswith(" ") or "|" not in line:
                continue  # the licence header
            for part in line.split("|", 1)[1].split(";"):
                words = _WORD.findall(part.lower())
                if len(words) < 6 or len(words) > 40:
                    continue
                grams = {tuple(words[i:i + 8]) for i in range(max(1, len(words) - 7))}
                if grams & seen:
                    continue
                seen |= grams
                out.append(_clean(part))
    return tuple(out)


def documents(name: str, count: int | None = None) -> list[tuple[str, ...]]:
    """The first ``count`` (default: all) of fixture source ``name``'s documents (``ALLOCATION``), each
    ``SENTENCES_PER_DOCUMENT`` sentences; disjoint from every other source's."""
    if name not in ALLOCATION:
        raise KeyError(f"no fixture text allocated to {name!r}; allocated: {', '.join(ALLOCATION)}")
    count = ALLOCATION[name] if count is None else count
    if count > ALLOCATION[name]:
        raise ValueError(f"fixture source {name!r} has {ALLOCATION[name]} documents, {count} asked for")
    sentences = wordnet_sentences()
    first = sum(ALLOCATION[n] for n in list(ALLOCATION)[:list(ALLOCATION).index(name)])
    docs = []
    for d in range(first, first + count):
        start = d * SENTENCES_PER_DOCUMENT
        docs.append(tuple(sentences[start:start + SENTENCES_PER_DOCUMENT]))
    return docs


def sentences() -> list[str]:
    """Every sentence of every fixture source (the tiny tokenizers' training text)."""
    return [s for name in ALLOCATION for doc in documents(name) for s in doc]


def chinese(sentence: str) -> str:
    """A deterministic pseudo-Chinese sentence for ``sentence``: one 1-2 character word per English word."""
    words = []
    for word in _WORD.findall(sentence):
        code = zlib.crc32(word.lower().encode("utf-8"))
        length = 1 + code % 2
        words.append("".join(_HANZI[(code >> (8 * i)) % len(_HANZI)] for i in range(length)))
    return "".join(words) + "。"
