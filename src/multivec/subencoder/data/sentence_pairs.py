"""Unlabelled sentence pairs from comparable text (Chen et al. 2023, §3.3, start of the pipeline).

Paper: 2.5M sentence pairs from topically related news (Zhou et al. 2022), read from a JSONL
file ``{"id", "sentence_a", "sentence_b"}`` (``read_pair_file``). Demo: pairs of sentences
from *different documents of the same PropSegment test cluster* (Wikipedia articles on one topic,
machine-translated from several languages): each sentence of a document is paired with the
``per_sentence`` sentences of each other document of its cluster that share the most content
words with it (at least ``min_shared``), each unordered pair once. Never the dev split: dev is
where the retrieval tables are evaluated.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass

from multivec.io import MalformedInputError, iter_jsonl
from multivec.subencoder.data.nli import content_forms
from multivec.subencoder.data.propsegment import Cluster


@dataclass(frozen=True)
class SentencePair:
    pair_id: str
    a_id: str
    a: str
    b_id: str
    b: str

    def to_row(self) -> dict:
        return {"pair_id": self.pair_id, "a": {"id": self.a_id, "sentence": self.a},
                "b": {"id": self.b_id, "sentence": self.b}}


def cluster_pairs(clusters: list[Cluster], per_sentence: int = 2, min_shared: int = 3) -> list[SentencePair]:
    """Cross-document pairs within each cluster, most content words shared first."""
    pairs: list[SentencePair] = []
    seen: set[tuple[str, str]] = set()
    for cluster in clusters:
        forms = {s.key: content_forms(s.text) for doc in cluster.documents.values() for s in doc}
        for doc_a, doc_b in itertools.permutations(cluster.documents, 2):
            for sentence in cluster.documents[doc_a]:
                scored = [(len(forms[sentence.key] & forms[other.key]), other.index, other)
                          for other in cluster.documents[doc_b]]
                scored = sorted((s for s in scored if s[0] >= min_shared), key=lambda s: (-s[0], s[1]))
                for _, _, other in scored[:per_sentence]:
                    key = tuple(sorted((sentence.key, other.key)))
                    if key in seen:
                        continue
                    seen.add(key)
                    first, second = (sentence, other) if sentence.key == key[0] else (other, sentence)
                    pairs.append(SentencePair(f"p{len(pairs):06d}", first.key, first.text, second.key, second.text))
    return pairs


def read_pair_file(path: str | os.PathLike) -> list[SentencePair]:
    """Paper-scale pairs: JSONL rows ``{"id", "sentence_a", "sentence_b"}`` (strings)."""
    pairs = []
    for line, row in iter_jsonl(path):
        for key in ("id", "sentence_a", "sentence_b"):
            if not isinstance(row.get(key), str) or not row[key].strip():
                raise MalformedInputError(path, line, f"{key!r} must be a non-empty string")
        pairs.append(SentencePair(row["id"], f"{row['id']}:a", row["sentence_a"], f"{row['id']}:b", row["sentence_b"]))
    return pairs


def read_pairs(path: str | os.PathLike) -> list[SentencePair]:
    """Pairs written by ``SentencePair.to_row`` (``pairs.jsonl``)."""
    pairs = []
    for line, row in iter_jsonl(path):
        try:
            pairs.append(SentencePair(row["pair_id"], row["a"]["id"], row["a"]["sentence"],
                                      row["b"]["id"], row["b"]["sentence"]))
        except (KeyError, TypeError):
            raise MalformedInputError(path, line, "expected {pair_id, a: {id, sentence}, b: {id, sentence}}") from None
    return pairs
