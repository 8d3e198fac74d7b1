"""Atomic-fact retrieval on PropSegment (Chen et al. 2023, §4.2.1 Table 1; §5.2 Table 4; §5.4 Table 5;
App. C.1 baselines): encode every candidate and query proposition in its sentence, rank candidates by
cosine similarity, score P@1 and R@5/10/20.

Sentences are encoded whole (up to the encoder's position limit), whatever the training length.

- Proposition level (Tables 1, 5): the query itself is removed from its ranking.
- Sentence and document level (Table 4): a unit's score is the max over its propositions and the top-k
  unique units are returned; every proposition of the query's own document is left out (it is never
  gold: evidence comes from another document of the cluster, and it would otherwise rank first).

Each sentence is forwarded once for all its propositions (``SubEncoder.encode``), except for the
``full_mask`` and ``token_subset`` baselines, which need one forward per proposition by definition.

Every level's metrics are also kept per query (``per_query``: the query ids, ``query_unit_id``, and each
metric's per-query values ×100), the evaluation units of the bootstrap CIs and paired tests; the summary
numbers are their means.
"""

from __future__ import annotations

from typing import Any, Sequence

import torch

from multivec.subencoder.model import SubEncoder
from multivec.subencoder.retrieval_set import Proposition, RetrievalSet
from multivec.subencoder.retrieval_metrics import mean_metrics, per_query_metrics


LEVELS = ("proposition", "sentence", "document")


def encode_propositions(model: SubEncoder, sentences: dict[tuple[str, int], str],
                        spans: Sequence[tuple[tuple[str, int], list[list[int]]]], *, strategy: str = "mask_pooling",
                        batch_size: int = 32) -> torch.Tensor:
    """One vector per (sentence key, char spans) item, in order; each sentence tokenised (and, for mask
    pooling, forwarded) once."""
    keys = list(dict.fromkeys(key for key, _ in spans))
    position = {key: i for i, key in enumerate(keys)}
    per_sentence: list[list[list[list[int]]]] = [[] for _ in keys]
    slot = []
    for key, prop_spans in spans:
        per_sentence[position[key]].append(prop_spans)
        slot.append((position[key], len(per_sentence[position[key]]) - 1))
    texts = [sentences[key] for key in keys]
    encoded, masks = model.span_masks(texts, per_sentence, max_tokens=model.position_limit)  # whole sentences
    vectors = model.encode(texts, masks, strategy=strategy, batch_size=batch_size, input_ids=encoded["input_ids"])
    offsets = [0]
    for props in per_sentence:
        offsets.append(offsets[-1] + len(props))
    return vectors[[offsets[s] + j for s, j in slot]]


def proposition_spans(rs: RetrievalSet, props: Sequence[Proposition]):
    return [(p.sentence_key, rs.char_spans(p)) for p in props]


def query_unit_id(rs: RetrievalSet, row: int) -> str:
    """The evaluation-unit id of query ``row`` of ``rs``: its row and its sentence (document:sentence). A
    segmenter-predicted query (Table 8) keeps the id of the gold query it stands in for, so both pair up."""
    query = rs.queries[row]
    return f"q{row}:{query.document_id}:{query.sentence_index}"


def evaluate(model: SubEncoder, rs: RetrievalSet, *, strategy: str = "mask_pooling", batch_size: int = 32,
             queries: Sequence[Proposition] | None = None, query_rows: Sequence[int] | None = None
             ) -> dict[str, Any]:
    """Proposition-, sentence- and document-level metrics of one encoder on ``rs``.

    ``queries``/``query_rows`` (Table 8): other query propositions (e.g. a segmenter's) standing in for
    the queries ``query_rows`` of ``rs`` (same gold); default: ``rs``'s own queries.
    """
    candidates = encode_propositions(model, rs.sentences, proposition_spans(rs, rs.candidates),
                                     strategy=strategy, batch_size=batch_size)
    rows = list(range(len(rs.queries))) if query_rows is None else list(query_rows)
    query_props = [rs.queries[r] for r in rows] if queries is None else list(queries)
    if len(query_props) != len(rows):
        raise ValueError(f"{len(query_props)} query propositions for {len(rows)} query rows")
    query_vectors = encode_propositions(model, rs.sentences, proposition_spans(rs, query_props),
                                        strategy=strategy, batch_size=batch_size)
    gold = [rs.gold[r] for r in rows]
    candidate_index = {c: i for i, c in enumerate(rs.candidates)}
    own = [candidate_index.get(prop) for prop in query_props]  # the query itself, when it is a candidate
    results: dict[str, Any] = {"queries": len(rows), "candidates": len(rs.candidates),
                               "dim": int(candidates.shape[1])}
    per_query = {"units": [query_unit_id(rs, r) for r in rows]}
    per_query["proposition"] = per_query_metrics(query_vectors, candidates, gold, own)
    by_document: dict[str, list[int]] = {}
    for i, cand in enumerate(rs.candidates):
        by_document.setdefault(cand.document_id, []).append(i)
    excluded = [by_document.get(p.document_id, []) or None for p in query_props]
    for level, unit_key in (("sentence", lambda c: c.sentence_key), ("document", lambda c: c.document_id)):
        units = {key: i for i, key in enumerate(dict.fromkeys(unit_key(c) for c in rs.candidates))}
        unit_of = [units[unit_key(c)] for c in rs.candidates]
        unit_gold = [{unit_of[g] for g in gold_set} for gold_set in gold]
        per_query[level] = per_query_metrics(query_vectors, candidates, unit_gold, excluded, unit_of, len(units))
        results[f"{level}_units"] = len(units)
    for level in LEVELS:
        results[level] = mean_metrics(per_query[level])
    vectors_per_sentence = len(rs.candidates) / max(1, len({c.sentence_key for c in rs.candidates}))
    results["index"] = {"vectors_per_sentence": round(vectors_per_sentence, 3),
                        "bytes_per_vector_fp32": 4 * int(candidates.shape[1])}
    results["per_query"] = per_query
    return results


def predicted_queries(rs: RetrievalSet, segment, align, threshold: float = 0.8
                      ) -> tuple[list[Proposition], list[int]]:
    """Table 8 (App. C.2; §5.3): segmenter-predicted propositions standing in for the gold queries.

    ``segment(sentences) -> list[list[str]]`` (the segmenter interface of
    ``multivec.subencoder.segmentation``) splits each query sentence into proposition texts;
    ``align(sentence, text) -> list[[start, end]]`` gives the character spans of a text's words in its
    sentence (App. A.3). A predicted proposition's PropSegment tokens are those overlapping its spans; a gold
    query is kept when the best predicted proposition of its sentence has token-set Jaccard > ``threshold``
    with it, and that prediction becomes its query. Returns (predicted propositions, rows of ``rs.queries``).
    """
    from multivec.subencoder.retrieval_set import jaccard

    keys = list(dict.fromkeys(q.sentence_key for q in rs.queries))
    texts = [rs.sentences[k] for k in keys]
    segmented = segment(texts)
    if len(segmented) != len(texts):
        raise ValueError(f"the segmenter returned {len(segmented)} segmentations for {len(texts)} sentences")
    predicted: dict[tuple[str, int], list[Proposition]] = {}
    for key, text, props in zip(keys, texts, segmented):
        token_spans = rs.token_spans[key]
        found = []
        for prop_text in props:
            spans = align(text, prop_text)
            tokens = tuple(t for t, (a, b) in enumerate(token_spans)
                           if any(a < end and start < b for start, end in spans))
            if tokens:
                found.append(Proposition(key[0], key[1], tokens))
        predicted[key] = found
    chosen, rows = [], []
    for row, query in enumerate(rs.queries):
        gold_tokens = set(query.token_indices)
        scored = [(jaccard(gold_tokens, set(p.token_indices)), k) for k, p in enumerate(predicted[query.sentence_key])]
        best = max(scored, default=None)
        if best is not None and best[0] > threshold:
            chosen.append(predicted[query.sentence_key][best[1]])
            rows.append(row)
    return chosen, rows
