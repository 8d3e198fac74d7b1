"""Reading PropSegment v1 (Chen et al. 2023, PropSegmEnt): sentences and human segmentations.

Only the Wikipedia clusters have text (``document_clusters.<split>.json``); a sentence's
tokens are given with their character offsets, and a human proposition is a set of token
indices (``propositions.<split>.json``, the reference response of each sentence, else the
first informational one). The sub-sentence encoder's demo training pairs come from the
**test** clusters; the dev clusters are kept for evaluation (Table 1).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from multivec.io import MalformedInputError, read_json


@dataclass
class Sentence:
    cluster_id: str
    document_id: str
    index: int
    text: str
    token_spans: list[tuple[int, int]]  # character [start, end) of each PropSegment token
    propositions: list[frozenset[int]] | None = None  # human segmentation (token indices), if any

    @property
    def key(self) -> str:
        return f"{self.cluster_id}:{self.document_id}:{self.index}"


@dataclass
class Cluster:
    cluster_id: str
    documents: dict[str, list[Sentence]] = field(default_factory=dict)


def _get(obj: dict, key: str, path, what: str):
    if not isinstance(obj, dict) or key not in obj:
        raise MalformedInputError(path, None, f"{what} has no {key!r}")
    return obj[key]


def read_clusters(path: str | os.PathLike) -> list[Cluster]:
    """The Wikipedia document clusters of a ``document_clusters.<split>.json``."""
    data = read_json(path)
    if not isinstance(data, list):
        raise MalformedInputError(path, None, "expected a JSON list of document clusters")
    clusters = []
    for number, entry in enumerate(data):
        cluster = Cluster(str(_get(entry, "cluster_id", path, f"cluster #{number}")))
        for document in _get(entry, "documents", path, f"cluster {cluster.cluster_id}"):
            doc_id = str(_get(document, "document_id", path, f"a document of cluster {cluster.cluster_id}"))
            sentences = []
            for index, sentence in enumerate(_get(document, "sentences", path, f"document {doc_id}")):
                text = _get(sentence, "sentence_text", path, f"sentence {index} of document {doc_id}")
                spans = []
                for token in _get(sentence, "tokens", path, f"sentence {index} of document {doc_id}"):
                    start = int(_get(token, "character_offset_of_token_in_sentence", path, f"a token of {doc_id}"))
                    spans.append((start, start + len(_get(token, "text", path, f"a token of {doc_id}"))))
                sentences.append(Sentence(cluster.cluster_id, doc_id, index, text, spans))
            cluster.documents[doc_id] = sentences
        clusters.append(cluster)
    return clusters


def attach_segmentations(clusters: list[Cluster], path: str | os.PathLike) -> int:
    """Set ``Sentence.propositions`` from ``propositions.<split>.json``; returns how many
    sentences got one. The reference response is used, else the first informational one."""
    by_key = {s.key: s for c in clusters for doc in c.documents.values() for s in doc}
    data = read_json(path)
    if not isinstance(data, list):
        raise MalformedInputError(path, None, "expected a JSON list of proposition segmentations")
    attached = 0
    for number, entry in enumerate(data):
        sid = _get(entry, "sentence_id", path, f"segmentation #{number}")
        key = f"{sid['cluster_id']}:{sid['document_id']}:{int(sid['sentence_index'])}"
        sentence = by_key.get(key)
        if sentence is None:  # a news cluster (no text in v1)
            continue
        responses = _get(entry, "segmentation_responses", path, f"segmentation of {key}")
        usable = [r for r in responses if not r.get("non_informational") and r.get("propositions")]
        if not usable:
            continue
        chosen = next((r for r in usable if r.get("is_reference_response")), usable[0])
        props = []
        for prop in chosen["propositions"]:
            indices = prop.get("token_indices", prop.get("included_token_indices"))
            if indices is None:
                raise MalformedInputError(path, None, f"a proposition of {key} has no token_indices")
            if any(not 0 <= int(i) < len(sentence.token_spans) for i in indices):
                raise MalformedInputError(path, None, f"a proposition of {key} indexes past its "
                                                      f"{len(sentence.token_spans)} tokens")
            props.append(frozenset(int(i) for i in indices))
        sentence.propositions = props
        attached += 1
    return attached


def load_split(folder: str | os.PathLike, split: str) -> list[Cluster]:
    """Clusters of a split with their human segmentations attached."""
    clusters = read_clusters(os.path.join(folder, f"document_clusters.{split}.json"))
    attach_segmentations(clusters, os.path.join(folder, f"propositions.{split}.json"))
    return clusters


def tokens_in_spans(token_spans: list[tuple[int, int]], char_spans) -> frozenset[int]:
    """PropSegment tokens whose characters lie inside the given char spans."""
    return frozenset(i for i, (a, b) in enumerate(token_spans) if any(s <= a and b <= e for s, e in char_spans))
