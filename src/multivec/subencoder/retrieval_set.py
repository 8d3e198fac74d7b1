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


from multivec.subencoder.segmentation_quality import jaccard  # noqa: E402  (one definition, Table 7's)


def _require(row: dict, key: str, path: Path, where: str):
    if key not in row:
        raise MalformedInputError(path, None, f"{where}: key {key!r} missing")
    return row[key]


def read_sentences(path: Path) -> tuple[dict, dict, dict]:
    """Texts and token spans of the Wikipedia clusters' sentences, and each document's cluster."""
    sentences, spans, cluster_of = {}, {}, {}
    for c_number, cluster in enumerate(read_json(path)):
        if _require(cluster, "source_dataset", path, f"cluster {c_number}") != WIKI_SOURCE:
            continue
        for document in _require(cluster, "documents", path, f"cluster {c_number}"):
            doc_id = str(_require(document, "document_id", path, f"cluster {c_number}"))
            cluster_of[doc_id] = str(cluster["cluster_id"])
            for index, sentence in enumerate(_require(document, "sentences", path, f"document {doc_id}")):
                text = _require(sentence, "sentence_text", path, f"document {doc_id} sentence {index}")
                token_spans = []
                for token in _require(sentence, "tokens", path, f"document {doc_id} sentence {index}"):
                    start = int(token["character_offset_of_token_in_sentence"])
                    token_spans.append((start, start + len(token["text"])))
                    if text[start:start + len(token["text"])] != token["text"]:
                        raise MalformedInputError(path, None, f"document {doc_id} sentence {index}: token "
                                                  f"{token['text']!r} is not at offset {start}")
                sentences[(doc_id, index)] = text
                spans[(doc_id, index)] = token_spans
    if not sentences:
        raise MalformedInputError(path, None, f"no {WIKI_SOURCE} cluster with sentences")
    return sentences, spans, cluster_of


def _proposition(document_id, sentence_index, prop: dict, path: Path) -> Proposition:
    indices = prop.get("token_indices")
    if not isinstance(indices, list) or not indices:
        raise MalformedInputError(path, None, f"document {document_id} sentence {sentence_index}: a proposition "
                                  "without 'token_indices'")
    return Proposition(str(document_id), int(sentence_index), tuple(sorted(set(int(i) for i in indices))))


def read_reference_segmentations(path: Path, sentences: dict) -> dict[tuple[str, int], list[Proposition]]:
    """Per segmented sentence of ``sentences``: its reference segmentation's propositions."""
    out = {}
    for row in read_json(path):
        sid = _require(row, "sentence_id", path, "segmentation")
        key = (str(sid["document_id"]), int(sid["sentence_index"]))
        if key not in sentences:
            continue
        responses = _require(row, "segmentation_responses", path, f"sentence {key}")
        reference = [r for r in responses if r.get("is_reference_response")] or responses[:1]
        props = [_proposition(*key, p, path) for p in (reference[0].get("propositions") or [])] if reference else []
        out[key] = props
    return out


def build_retrieval_set(folder: str | os.PathLike, split: str = "dev") -> RetrievalSet:
    """The atomic-fact retrieval set from ``folder`` (``propsegment/v1`` of the mirror or the download)."""
    folder = Path(folder)
    if split == "test":
        raise ValueError("PropSegment's test relationships are not public: the retrieval set is built on dev")
    clusters_path = folder / f"document_clusters.{split}.json"
    sentences, token_spans, cluster_of = read_sentences(clusters_path)
    segmentations = read_reference_segmentations(folder / f"propositions.{split}.json", sentences)

    relationships_path = folder / f"relationships.{split}.json"
    gold_of: dict[Proposition, set[Proposition]] = defaultdict(set)
    skipped = defaultdict(int)
    for number, row in enumerate(read_json(relationships_path)):
        hyp = _require(row, "hypothesis_proposition", relationships_path, f"row {number}")
        key = (str(hyp["document_id"]), int(hyp["sentence_index"]))
        if key not in sentences:
            skipped["hypothesis_outside_wikipedia"] += 1
            continue
        responses = _require(row, "relationship_responses", relationships_path, f"row {number}")
        entails = [r for r in responses if r.get("relationship") == ENTAILS]
        if 2 * len(entails) <= len(responses):
            skipped["no_entailment_majority"] += 1
            continue
        query = _proposition(*key, hyp["proposition"], relationships_path)
        premise = str(_require(row, "premise_document_id", relationships_path, f"row {number}"))
        for response in entails:
            support = response.get("supporting_premise_proposition")
            if support and (premise, int(support["sentence_index"])) in sentences:
                gold_of[query].add(_proposition(premise, support["sentence_index"], support["proposition"],
                                                relationships_path))
    queries = sorted((q for q, g in gold_of.items() if g),
                     key=lambda p: (p.document_id, p.sentence_index, p.token_indices))
    candidates: list[Proposition] = [p for key in sorted(segmentations) for p in segmentations[key]]
    candidates = list(dict.fromkeys(candidates))
    index = {p: i for i, p in enumerate(candidates)}
    by_sentence: dict[tuple[str, int], list[int]] = defaultdict(list)
    for i, prop in enumerate(candidates):
        if prop.token_indices[-1] >= len(token_spans[prop.sentence_key]):
            raise MalformedInputError(folder, None, f"proposition {prop} points past the sentence's "
                                      f"{len(token_spans[prop.sentence_key])} tokens")
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
