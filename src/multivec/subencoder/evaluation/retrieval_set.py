"""The atomic-fact retrieval set of PropSegment (Chen et al. 2023, §4.2.1; Chen et al. 2023 PropSegment),
rebuilt from the Wikipedia clusters of the PropSegment v1 DEV split (the split with entailment labels).

- **Candidates**: every proposition of the reference segmentation (``is_reference_response``; the first
  response when a sentence has none) of every segmented sentence; one per distinct (document, sentence,
  token set).
- **Queries**: hypothesis propositions whose majority label (more than half of the raters' responses) is
  ``RELATIONSHIP_ENTAILS`` and that have at least one supporting premise proposition. A query is encoded
  from its own tokens; when it is also a candidate, that candidate is removed from its ranking.
- **Gold**: the supporting premise propositions named by the raters who answered "entails" (over every
  premise document of the query), each mapped to the candidate of its sentence with the highest Jaccard
  similarity of token sets (raters mark evidence spans that need not coincide with the reference
  segmentation; only 235 of the 570 distinct evidence spans of dev do).

Propositions are character spans (end exclusive) of PropSegment's tokens in the sentence text, the format
``multivec.subencoder.masks.spans_to_token_mask`` turns into subword masks.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from multivec.io import MalformedInputError, read_json

WIKI_SOURCE = "SOURCE_WIKI_CLUSTERS"
ENTAILS = "RELATIONSHIP_ENTAILS"


@dataclass(frozen=True)
class Proposition:
    document_id: str
    sentence_index: int
    token_indices: tuple[int, ...]

    @property
    def sentence_key(self) -> tuple[str, int]:
        return self.document_id, self.sentence_index


@dataclass
class RetrievalSet:
    sentences: dict[tuple[str, int], str]  # (document id, sentence index) -> text
    token_spans: dict[tuple[str, int], list[tuple[int, int]]]  # PropSegment tokens as char spans
    candidates: list[Proposition]
    queries: list[Proposition]
    gold: list[set[int]]  # per query: indices into candidates
    query_index: list[int | None]  # per query: its index in candidates (removed from its ranking), or None
    cluster_of: dict[str, str] = field(default_factory=dict)  # document id -> cluster id
    counts: dict[str, int] = field(default_factory=dict)

    def char_spans(self, prop: Proposition) -> list[list[int]]:
        spans = self.token_spans[prop.sentence_key]
        return [list(spans[t]) for t in prop.token_indices]


from multivec.subencoder.evaluation.segmentation_quality import jaccard  # noqa: E402  (one definition, Table 7's)


def _require(row: Any, key: str, path: Path, where: str):
    if not isinstance(row, dict):
        raise MalformedInputError(path, None, f"{where}: expected an object, got {type(row).__name__}")
    if key not in row:
        raise MalformedInputError(path, None, f"{where}: key {key!r} missing")
    return row[key]


def _int(value: Any, path: Path, where: str) -> int:
    """``value`` as an int (an int, or a string of digits as PropSegment's ids are), else an error naming
    the file and the record."""
    if isinstance(value, bool) or not isinstance(value, (int, str)) or (isinstance(value, str) and not value.isdigit()):
        raise MalformedInputError(path, None, f"{where}: {value!r} is not a non-negative integer")
    number = int(value)
    if number < 0:
        raise MalformedInputError(path, None, f"{where}: {value!r} is negative")
    return number


def read_cluster_ids(path: Path) -> set[str]:
    """Every cluster id of a PropSegment clusters file, whatever its source (the News clusters of
    ``document_cluster_retrieval_instructions`` have masked text but real ids)."""
    return {str(_require(cluster, "cluster_id", path, f"cluster {n}")) for n, cluster in enumerate(read_json(path))}


def read_sentences(path: Path) -> tuple[dict, dict, dict]:
    """Texts and token spans of the Wikipedia clusters' sentences, and each document's cluster."""
    sentences, spans, cluster_of = {}, {}, {}
    for c_number, cluster in enumerate(read_json(path)):
        if _require(cluster, "source_dataset", path, f"cluster {c_number}") != WIKI_SOURCE:
            continue
        cluster_id = str(_require(cluster, "cluster_id", path, f"cluster {c_number}"))
        for document in _require(cluster, "documents", path, f"cluster {c_number}"):
            doc_id = str(_require(document, "document_id", path, f"cluster {c_number}"))
            cluster_of[doc_id] = cluster_id
            for index, sentence in enumerate(_require(document, "sentences", path, f"document {doc_id}")):
                where = f"document {doc_id} sentence {index}"
                text = _require(sentence, "sentence_text", path, where)
                token_spans = []
                for t_number, token in enumerate(_require(sentence, "tokens", path, where)):
                    token_text = _require(token, "text", path, f"{where} token {t_number}")
                    start = _int(_require(token, "character_offset_of_token_in_sentence", path, f"{where} token {t_number}"),
                                 path, f"{where} token {t_number}: character_offset_of_token_in_sentence")
                    token_spans.append((start, start + len(token_text)))
                    if text[start:start + len(token_text)] != token_text:
                        raise MalformedInputError(path, None, f"{where}: token {token_text!r} is not at offset {start}")
                sentences[(doc_id, index)] = text
                spans[(doc_id, index)] = token_spans
    if not sentences:
        raise MalformedInputError(path, None, f"no {WIKI_SOURCE} cluster with sentences")
    return sentences, spans, cluster_of


def _proposition(document_id, sentence_index, prop: Any, path: Path, token_count: int | None = None,
                 where: str = "") -> Proposition:
    where = where or f"document {document_id} sentence {sentence_index}"
    indices = prop.get("token_indices") if isinstance(prop, dict) else None
    if not isinstance(indices, list) or not indices:
        raise MalformedInputError(path, None, f"{where}: a proposition without 'token_indices'")
    tokens = tuple(sorted({_int(i, path, f"{where}: token index") for i in indices}))
    if token_count is not None and tokens[-1] >= token_count:
        raise MalformedInputError(path, None, f"{where}: token index {tokens[-1]} points past the sentence's "
                                  f"{token_count} tokens")
    return Proposition(str(document_id), int(sentence_index), tokens)


def _sentence_key(sid: Any, path: Path, where: str) -> tuple[str, str, int]:
    """(cluster id, document id, sentence index) of a PropSegment sentence id."""
    return (str(_require(sid, "cluster_id", path, where)), str(_require(sid, "document_id", path, where)),
            _int(_require(sid, "sentence_index", path, where), path, f"{where}: sentence_index"))


def _check_known(cluster: str, key: tuple[str, int], known_clusters: set[str], wiki_clusters: set[str],
                 sentences: dict, path: Path, where: str) -> bool:
    """True when ``key`` is a sentence of the Wikipedia clusters; False for a sentence of another known
    cluster (News); an error naming the record when its cluster is unknown, or when it claims a
    Wikipedia cluster but matches none of its sentences."""
    if cluster not in known_clusters:
        raise MalformedInputError(path, None, f"{where}: cluster {cluster} matches no cluster of the PropSegment "
                                  "clusters files")
    if cluster in wiki_clusters and key not in sentences:
        raise MalformedInputError(path, None, f"{where}: document {key[0]} sentence {key[1]} matches no sentence of "
                                  f"Wikipedia cluster {cluster}")
    return key in sentences


def read_reference_segmentations(path: Path, sentences: dict, spans: dict | None = None,
                                 known_clusters: set[str] | None = None, wiki_clusters: set[str] | None = None
                                 ) -> dict[tuple[str, int], list[Proposition]]:
    """Per segmented sentence of ``sentences``: its reference segmentation's propositions. With
    ``known_clusters``/``wiki_clusters`` (cluster ids of every source / of the Wikipedia clusters), a record
    of an unknown cluster, or of a Wikipedia cluster but no sentence of it, is an error naming it."""
    out = {}
    for number, row in enumerate(read_json(path)):
        where = f"record {number}"
        sid = _require(row, "sentence_id", path, where)
        cluster, doc_id, index = _sentence_key(sid, path, where)
        key = (doc_id, index)
        where = f"record {number} (document {doc_id} sentence {index})"
        if known_clusters is not None:
            if not _check_known(cluster, key, known_clusters, wiki_clusters or set(), sentences, path, where):
                continue
        elif key not in sentences:
            continue
        responses = _require(row, "segmentation_responses", path, f"sentence {key}")
        if not isinstance(responses, list):
            raise MalformedInputError(path, None, f"{where}: 'segmentation_responses' is not a list")
        reference = [r for r in responses if isinstance(r, dict) and r.get("is_reference_response")] or responses[:1]
        count = None if spans is None else len(spans[key])
        props = [_proposition(*key, p, path, count, where) for p in (reference[0].get("propositions") or [])] \
            if reference else []
        out[key] = props
    if not out:
        raise MalformedInputError(path, None, "no segmentation of a Wikipedia cluster's sentence")
    return out


def build_retrieval_set(folder: str | os.PathLike, split: str = "dev") -> RetrievalSet:
    """The atomic-fact retrieval set from ``folder`` (``propsegment/v1`` of the mirror or the download).

    Every record of the propositions and relationships files must name a cluster of
    ``document_clusters.<split>.json`` (Wikipedia, used) or ``document_cluster_retrieval_instructions.<split>.json``
    (News, masked text: skipped and counted); a record of a Wikipedia cluster must name one of its sentences."""
    folder = Path(folder)
    if split == "test":
        raise ValueError("PropSegment's test relationships are not public: the retrieval set is built on dev")
    clusters_path = folder / f"document_clusters.{split}.json"
    sentences, token_spans, cluster_of = read_sentences(clusters_path)
    wiki_clusters = set(cluster_of.values())
    known_clusters = read_cluster_ids(clusters_path) | \
        read_cluster_ids(folder / f"document_cluster_retrieval_instructions.{split}.json")
    segmentations = read_reference_segmentations(folder / f"propositions.{split}.json", sentences, token_spans,
                                                  known_clusters, wiki_clusters)

    relationships_path = folder / f"relationships.{split}.json"
    gold_of: dict[Proposition, set[Proposition]] = defaultdict(set)
    skipped = defaultdict(int)
    for number, row in enumerate(read_json(relationships_path)):
        where = f"record {number}"
        cluster = str(_require(row, "cluster_id", relationships_path, where))
        hyp = _require(row, "hypothesis_proposition", relationships_path, where)
        key = (str(_require(hyp, "document_id", relationships_path, f"{where} hypothesis_proposition")),
               _int(_require(hyp, "sentence_index", relationships_path, f"{where} hypothesis_proposition"),
                    relationships_path, f"{where} hypothesis_proposition sentence_index"))
        where = f"record {number} (hypothesis: document {key[0]} sentence {key[1]})"
        if not _check_known(cluster, key, known_clusters, wiki_clusters, sentences, relationships_path, where):
            skipped["hypothesis_outside_wikipedia"] += 1
            continue
        responses = _require(row, "relationship_responses", relationships_path, where)
        entails = [r for r in responses if isinstance(r, dict) and r.get("relationship") == ENTAILS]
        if 2 * len(entails) <= len(responses):
            skipped["no_entailment_majority"] += 1
            continue
        query = _proposition(*key, _require(hyp, "proposition", relationships_path, where), relationships_path,
                             len(token_spans[key]), where)
        premise = str(_require(row, "premise_document_id", relationships_path, where))
        if cluster_of.get(premise) != cluster:
            raise MalformedInputError(relationships_path, None, f"{where}: premise document {premise} is not a "
                                      f"document of cluster {cluster}")
        for response in entails:
            support = response.get("supporting_premise_proposition")
            if not support:
                continue
            support_key = (premise, _int(_require(support, "sentence_index", relationships_path, where),
                                         relationships_path, f"{where} supporting_premise_proposition sentence_index"))
            if support_key not in sentences:
                raise MalformedInputError(relationships_path, None, f"{where}: supporting premise sentence "
                                          f"{support_key[1]} matches no sentence of document {premise}")
            gold_of[query].add(_proposition(*support_key, _require(support, "proposition", relationships_path, where),
                                            relationships_path, len(token_spans[support_key]), where))
    if not gold_of:
        raise MalformedInputError(relationships_path, None, "no hypothesis proposition of a Wikipedia cluster is "
                                  "entailed by a majority with a supporting premise proposition: no query")
    queries = sorted((q for q, g in gold_of.items() if g),
                     key=lambda p: (p.document_id, p.sentence_index, p.token_indices))
    candidates: list[Proposition] = [p for key in sorted(segmentations) for p in segmentations[key]]
    candidates = list(dict.fromkeys(candidates))
    index = {p: i for i, p in enumerate(candidates)}
    by_sentence: dict[tuple[str, int], list[int]] = defaultdict(list)
    for i, prop in enumerate(candidates):
        by_sentence[prop.sentence_key].append(i)

    def closest(prop: Proposition) -> int | None:
        tokens = set(prop.token_indices)
        scored = [(jaccard(tokens, set(candidates[i].token_indices)), -i) for i in by_sentence[prop.sentence_key]]
        best = max(scored, default=None)
        return -best[1] if best and best[0] > 0 else None

    kept_queries, gold, query_index = [], [], []
    for query in queries:
        mapped = {closest(g) for g in gold_of[query]} - {None}
        if not mapped:
            skipped["query_without_gold_candidate"] += 1
            continue
        kept_queries.append(query)
        gold.append(mapped)
        query_index.append(index.get(query))
    queries = kept_queries
    counts = {"queries": len(queries), "candidates": len(candidates),
              "queries_that_are_candidates": sum(i is not None for i in query_index),
              "sentences": len(sentences), "segmented_sentences": len(segmentations),
              "documents": len(cluster_of), "gold_per_query_x100": round(100 * sum(map(len, gold)) / max(1, len(gold))),
              **{f"skipped_{k}": v for k, v in skipped.items()}}
    return RetrievalSet(sentences, token_spans, candidates, queries, gold, query_index, cluster_of, counts)
