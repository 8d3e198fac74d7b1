"""Deterministic fixture text: English sentences and documents from gensim's Lee background corpus (300
real news documents shipped in gensim's wheel), and a pseudo-Chinese rendering of any English sentence
(each word mapped by a stable hash to a word of common Chinese characters), so that every language check
of the readers sees the language it expects."""

from __future__ import annotations

import re
import zlib
from functools import lru_cache

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])")
# Common Chinese characters, grouped into the "words" the rendering draws from.
_HANZI = ("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小"
          "么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样"
          "现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位"
          "因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书")


@lru_cache(maxsize=1)
def lee_documents() -> tuple[tuple[str, ...], ...]:
    """The Lee background corpus as documents of sentences (documents without two sentences dropped)."""
    from multivec.data.download import gensim_test_file

    documents = []
    for line in gensim_test_file("lee_background.cor").read_text(encoding="utf-8").splitlines():
        sentences = [s.strip() for s in _SENTENCE_END.split(line.strip()) if len(s.split()) >= 4]
        if len(sentences) >= 2:
            documents.append(tuple(sentences))
    return tuple(documents)


def sentences() -> list[str]:
    """Every fixture sentence, in corpus order."""
    return [s for document in lee_documents() for s in document]


def chinese(sentence: str) -> str:
    """A deterministic pseudo-Chinese sentence for ``sentence``: one 1-2 character word per English word."""
    words = []
    for word in re.findall(r"[A-Za-z0-9']+", sentence):
        code = zlib.crc32(word.lower().encode("utf-8"))
        length = 1 + code % 2
        words.append("".join(_HANZI[(code >> (8 * i)) % len(_HANZI)] for i in range(length)))
    return "".join(words) + "。"
