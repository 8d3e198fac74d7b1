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


def _get(obj, key: str, path, record: str, kind: type | tuple[type, ...] | None = None):
    """``obj[key]``, or a MalformedInputError naming the file, the record and the key; with
    ``kind``, the value must also be of that type (a bool is never an int)."""
    if not isinstance(obj, dict):
        raise MalformedInputError(path, None, f"{record}: expected a JSON object, got {type(obj).__name__}")
    if key not in obj:
        raise MalformedInputError(path, None, f"{record}: key {key!r} missing")
    value = obj[key]
    if kind is not None and (not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, (int,)))):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise MalformedInputError(path, None, f"{record}: {key!r} must be {names}, got {value!r}")
    return value


def _index(value, path, record: str) -> int:
    """A non-negative integer index (an int, or a string of digits as some exports write it)."""
    if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, str) and value.isdigit())):
        raise MalformedInputError(path, None, f"{record}: expected a non-negative integer index, got {value!r}")
    if int(value) < 0:
        raise MalformedInputError(path, None, f"{record}: expected a non-negative integer index, got {value!r}")
    return int(value)


def read_clusters(path: str | os.PathLike, warnings: list[str] | None = None) -> list[Cluster]:
    """The Wikipedia document clusters of a ``document_clusters.<split>.json``.

    Every record is checked: a missing key, a value of the wrong type, or a token whose
    ``character_offset_of_token_in_sentence`` does not point at its text in ``sentence_text``
    stops with a MalformedInputError naming the file and the record (cluster, document, sentence,
    token). A cluster id or a document id given twice in the file (a document id is unique across the
    file's clusters) stops too, naming both records: the second would replace the first. A copy of a
    registered file holding other numbers of clusters, documents or sentences warns (appended to
    ``warnings``), or stops below half (``multivec.data.sources.check_registered_counts``)."""
    from multivec.data.sources import check_registered_counts

    data = read_json(path)
    if not isinstance(data, list):
        raise MalformedInputError(path, None, "expected a JSON list of document clusters")
    clusters = []
    cluster_records: dict[str, str] = {}  # cluster id -> the record that gave it first
    document_records: dict[str, str] = {}  # document id -> the record that gave it first
    for number, entry in enumerate(data):
        cluster = Cluster(str(_get(entry, "cluster_id", path, f"cluster #{number}", (str, int))))
        where = f"cluster #{number} ({cluster.cluster_id})"
        if cluster.cluster_id in cluster_records:
            raise MalformedInputError(path, None, f"{where}: duplicate cluster id {cluster.cluster_id!r}, first given "
                                                  f"by {cluster_records[cluster.cluster_id]}")
        cluster_records[cluster.cluster_id] = where
        for d_number, document in enumerate(_get(entry, "documents", path, where, list)):
            doc_id = str(_get(document, "document_id", path, f"{where} document #{d_number}", (str, int)))
            record = f"{where} document #{d_number}"
            if doc_id in document_records:
                raise MalformedInputError(path, None, f"{record}: duplicate document id {doc_id!r}, first given by "
                                                      f"{document_records[doc_id]}")
            document_records[doc_id] = record
            sentences = []
            for index, sentence in enumerate(_get(document, "sentences", path, f"document {doc_id}", list)):
                record = f"document {doc_id} sentence {index}"
                text = _get(sentence, "sentence_text", path, record, str)
                spans = []
                for t_number, token in enumerate(_get(sentence, "tokens", path, record, list)):
                    token_record = f"{record} token {t_number}"
                    token_text = _get(token, "text", path, token_record, str)
                    start = _get(token, "character_offset_of_token_in_sentence", path, token_record, int)
                    if start < 0 or text[start:start + len(token_text)] != token_text:
                        raise MalformedInputError(path, None, f"{token_record}: offset {start} does not point at "
                                                              f"its text {token_text!r} in the sentence text")
                    spans.append((start, start + len(token_text)))
                sentences.append(Sentence(cluster.cluster_id, doc_id, index, text, spans))
            cluster.documents[doc_id] = sentences
        clusters.append(cluster)
    check_registered_counts(path, {"clusters": len(clusters), "documents": len(document_records),
                                   "sentences": sum(len(d) for c in clusters for d in c.documents.values())}, warnings)
    return clusters


@dataclass
class AttachCounts:
    """What ``attach_segmentations`` did with the records of a ``propositions.<split>.json``."""

    records: int = 0
    attached: int = 0  # sentences that got a human segmentation
    other_clusters: int = 0  # records of clusters the clusters file does not have (v1: the news clusters)
    no_usable_response: int = 0  # every response non-informational or empty


def attach_segmentations(clusters: list[Cluster], path: str | os.PathLike,
                         warnings: list[str] | None = None) -> AttachCounts:
    """Set ``Sentence.propositions`` from ``propositions.<split>.json``; the reference response is
    used, else the first informational one.

    Records of clusters that ``clusters`` does not have (the news clusters, which have no text in
    v1) are counted and skipped. A record of a known cluster whose document or sentence does not
    exist, and a file none of whose records matches a sentence of ``clusters`` (a propositions file
    of another split), stop with a MalformedInputError naming the file and the record; so does a
    missing key or an index that is not a token of its sentence. Two records of one sentence (whose second
    would replace the first's segmentation) stop naming both. A copy of a registered file with another number
    of records warns (appended to ``warnings``), or stops below half
    (``multivec.data.sources.check_registered_counts``)."""
    from multivec.data.sources import check_registered_counts

    by_key = {s.key: s for c in clusters for doc in c.documents.values() for s in doc}
    cluster_ids = {c.cluster_id for c in clusters}
    data = read_json(path)
    if not isinstance(data, list):
        raise MalformedInputError(path, None, "expected a JSON list of proposition segmentations")
    counts = AttachCounts(records=len(data))
    check_registered_counts(path, {"records": counts.records}, warnings)
    record_of: dict[str, str] = {}  # sentence key -> the record that gave it first
    for number, entry in enumerate(data):
        record = f"segmentation #{number}"
        sid = _get(entry, "sentence_id", path, record, dict)
        cluster_id = str(_get(sid, "cluster_id", path, f"{record} sentence_id", (str, int)))
        document_id = str(_get(sid, "document_id", path, f"{record} sentence_id", (str, int)))
        index = _index(_get(sid, "sentence_index", path, f"{record} sentence_id"), path, f"{record} sentence_index")
        key = f"{cluster_id}:{document_id}:{index}"
        if key in record_of:
            raise MalformedInputError(path, None, f"{record}: a second record of sentence {key} (cluster:document:"
                                                  f"index), first given by {record_of[key]}")
        record_of[key] = record
        record = f"{record} (sentence {key})"
        sentence = by_key.get(key)
        if sentence is None:
            if cluster_id not in cluster_ids:  # a news cluster (no text in v1)
                counts.other_clusters += 1
                continue
            raise MalformedInputError(path, None, f"{record}: cluster {cluster_id} has no such document and "
                                                  f"sentence in the clusters file")
        responses = _get(entry, "segmentation_responses", path, record, list)
        usable = []
        for r_number, response in enumerate(responses):
            if not isinstance(response, dict):
                raise MalformedInputError(path, None, f"{record} response #{r_number}: expected a JSON object")
            if not response.get("non_informational") and response.get("propositions"):
                usable.append(response)
        if not usable:
            counts.no_usable_response += 1
            continue
        chosen = next((r for r in usable if r.get("is_reference_response")), usable[0])
        props = []
        for p_number, prop in enumerate(_get(chosen, "propositions", path, record, list)):
            where = f"{record} proposition #{p_number}"
            if not isinstance(prop, dict):
                raise MalformedInputError(path, None, f"{where}: expected a JSON object")
            indices = prop.get("token_indices", prop.get("included_token_indices"))
            if not isinstance(indices, list):
                raise MalformedInputError(path, None, f"{where}: 'token_indices' missing or not a list")
            indices = [_index(i, path, where) for i in indices]
            if any(i >= len(sentence.token_spans) for i in indices):
                raise MalformedInputError(path, None, f"{where}: indexes past its sentence's "
                                                      f"{len(sentence.token_spans)} tokens")
            props.append(frozenset(indices))
        sentence.propositions = props
        counts.attached += 1
    if by_key and not counts.attached:
        raise MalformedInputError(path, None, f"none of its {counts.records} records is a sentence of the "
                                              f"{len(cluster_ids)} clusters read ({counts.other_clusters} of other "
                                              "clusters): a propositions file of another split?")
    return counts


def load_split(folder: str | os.PathLike, split: str) -> list[Cluster]:
    """Clusters of a split with their human segmentations attached."""
    clusters = read_clusters(os.path.join(folder, f"document_clusters.{split}.json"))
    attach_segmentations(clusters, os.path.join(folder, f"propositions.{split}.json"))
    return clusters


def tokens_in_spans(token_spans: list[tuple[int, int]], char_spans) -> frozenset[int]:
    """PropSegment tokens whose characters lie inside the given char spans."""
    return frozenset(i for i, (a, b) in enumerate(token_spans) if any(s <= a and b <= e for s, e in char_spans))
