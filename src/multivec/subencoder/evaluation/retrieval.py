"""Atomic-fact retrieval on PropSegment (Chen et al. 2023, §4.2.1 Table 1; §5.2 Table 4; §5.4 Table 5;
App. C.1 baselines): encode every candidate and query proposition in its sentence, rank candidates by
cosine similarity, score P@1 and R@5/10/20; and a lexical baseline without a model (word-set Jaccard,
``evaluate_lexical``).

Sentences are encoded whole (up to the encoder's position limit), whatever the training length.

- Proposition level (Tables 1, 5, 8), under each evaluation protocol (``PROTOCOLS``):
  ``authors``: only the query itself is removed from its ranking (when it is a candidate), as the authors'
  evaluation does; ``own_sentence_excluded``: every candidate of the query's own sentence is removed (its
  sibling propositions share the query's context, so a mask-pooling encoder ranks them first; none is ever
  gold); ``own_document_excluded``: every candidate of the query's document is removed. The removed
  candidates always come from the gold query of a row, also when a segmenter-predicted proposition stands
  in for it (Table 8), so gold and predicted runs rank the same pool. Tables 5 and 8 use ``authors``.
- Sentence and document level (Table 4): a unit's score is the max over its propositions and the top-k
  unique units are returned; every proposition of the query's own document is left out (it is never
  gold: evidence comes from another document of the cluster, and it would otherwise rank first).

Each sentence is forwarded once for all its propositions (``SubEncoder.encode``), except for the
``full_mask`` and ``token_subset`` baselines, which need one forward per proposition by definition.

Every level's metrics are also kept per query (``per_query``: the query ids, ``query_unit_id``, and each
metric's per-query values ×100), the evaluation units of the bootstrap CIs and paired tests; the summary
numbers are their means.

With a ``rankings`` list, the evaluation also hands back each query's ranked units, one row per (query,
ranking) (``ranking_rows``; the rules write them beside the evaluation JSON as ``<name>.rankings.jsonl``):
``query`` (``query_unit_id``), ``ranking`` (a protocol's name at the proposition level, ``sentence`` or
``document``), ``level``, ``ranked`` (the top 20 unit ids, best first, in the order the metrics read them),
``scores`` (the score each was ranked by) and ``gold`` (the query's gold unit ids). Unit ids: a proposition
``<document>:<sentence>:<token,token,...>`` (``proposition_id``), a sentence ``<document>:<sentence>``, a
document its id. ``multivec.interop.propsegment_formats`` turns them into TREC runs and qrels.
"""

from __future__ import annotations

from typing import Any, Sequence

import torch

from multivec.metrics.maxsim import cosine_matrix
from multivec.metrics.ranking import precision_recall_at
from multivec.subencoder.evaluation.retrieval_set import Proposition, RetrievalSet
from multivec.subencoder.evaluation.unit_ranking import (KS, mean_metrics, per_query_scores, ranked_unit_scores,
                                                         score_rankings)
from multivec.subencoder.model import SubEncoder


LEVELS = ("proposition", "sentence", "document")
# Which candidates leave a query's proposition-level ranking (Table 1; module doc).
PROTOCOLS = ("authors", "own_sentence_excluded", "own_document_excluded")


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


def proposition_id(prop: Proposition) -> str:
    """A candidate proposition's id in the rankings: ``<document>:<sentence>:<token indices, comma-separated>``
    (candidates are unique propositions, so ids are unique)."""
    return f"{prop.document_id}:{prop.sentence_index}:{','.join(map(str, prop.token_indices))}"


def unit_id(key: Any) -> str:
    """The id of a sentence (key ``(document, sentence)``: ``<document>:<sentence>``) or a document (its id)."""
    return ":".join(map(str, key)) if isinstance(key, tuple) else str(key)


def query_unit_id(rs: RetrievalSet, row: int) -> str:
    """The evaluation-unit id of query ``row`` of ``rs``: its row and its sentence (document:sentence). A
    segmenter-predicted query (Table 8) keeps the id of the gold query it stands in for, so both pair up."""
    query = rs.queries[row]
    return f"q{row}:{query.document_id}:{query.sentence_index}"


def removed_candidates(rs: RetrievalSet, rows: Sequence[int], protocol: str) -> list[list[int]]:
    """The candidates left out of each query's proposition-level ranking under ``protocol`` (``PROTOCOLS``).

    They are found from the GOLD query of each row (``rs.queries[row]``), never from the proposition that
    is encoded: a segmenter-predicted query standing in for a gold one (Table 8) loses exactly the gold
    query's candidates, so both runs rank the same pool."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown evaluation protocol {protocol!r}; known: {PROTOCOLS}")
    if protocol == "authors":
        return [[] if rs.query_index[r] is None else [rs.query_index[r]] for r in rows]
    key = (lambda c: c.sentence_key) if protocol == "own_sentence_excluded" else (lambda c: c.document_id)
    members: dict[Any, list[int]] = {}
    for i, cand in enumerate(rs.candidates):
        members.setdefault(key(cand), []).append(i)
    return [list(members.get(key(rs.queries[r]), [])) for r in rows]


def top1_shares(rs: RetrievalSet, rows: Sequence[int], rankings: Sequence[Sequence[int]]) -> dict[str, float]:
    """Where the top-1 candidates come from, in % of queries: the query's own sentence (a sibling
    proposition sharing its context; never gold, which is in another document) and its own document."""
    sentence = document = 0
    for row, ranking in zip(rows, rankings):
        if not ranking:
            continue
        top, query = rs.candidates[ranking[0]], rs.queries[row]
        sentence += top.sentence_key == query.sentence_key
        document += top.document_id == query.document_id
    n = max(1, len(rows))
    return {"top1_own_sentence_pct": 100 * sentence / n, "top1_own_document_pct": 100 * document / n}


def ranking_rows(name: str, level: str, query_ids: Sequence[str], ranked: Sequence[Sequence[int]],
                 scores: torch.Tensor, gold: Sequence[set[int]], unit_ids: Sequence[str],
                 unit_of: Sequence[int], removed: Sequence[Any]) -> list[dict[str, Any]]:
    """The rankings rows (module doc) of one ranking of every query: ``ranked[q]`` the units ``score_rankings``
    returned for query q, ``gold[q]`` its gold units, ``removed[q]`` the candidates it left out."""
    rows = []
    for q, (query, ranking, gold_set, exclude) in enumerate(zip(query_ids, ranked, gold, removed)):
        rows.append({"query": query, "ranking": name, "level": level, "ranked": [unit_ids[u] for u in ranking],
                     "scores": ranked_unit_scores(scores[q], ranking, unit_of, len(unit_ids), exclude),
                     "gold": [unit_ids[g] for g in sorted(gold_set)]})
    return rows


def evaluate_scores(rs: RetrievalSet, scores: torch.Tensor, rows: Sequence[int],
                    rankings: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Every protocol's proposition-level metrics and the sentence- and document-level metrics of one
    (Q, C) query-candidate score matrix; ``rows``: the rows of ``rs.queries`` the queries stand for.

    ``proposition`` is the authors' protocol (Tables 5, 8), ``protocols[<name>]`` each protocol's (Table 1),
    ``top1[<name>]`` where each protocol's top-1 candidates come from (``top1_shares``); ``per_query`` keeps
    the per-query values of each, and ``removed``: the candidate the authors' protocol left out per query.
    ``rankings``, when given, receives the rows of every ranking scored (``ranking_rows``); the result is the
    same with or without it."""
    rows = list(rows)
    if scores.shape != (len(rows), len(rs.candidates)):
        raise ValueError(f"score matrix {tuple(scores.shape)} for {len(rows)} queries and "
                         f"{len(rs.candidates)} candidates")
    gold = [rs.gold[r] for r in rows]
    results: dict[str, Any] = {"queries": len(rows), "candidates": len(rs.candidates),
                               "candidate_sentences": len({c.sentence_key for c in rs.candidates}),
                               "candidate_documents": len({c.document_id for c in rs.candidates}),
                               "protocols": {}, "top1": {}, "removed_per_query": {}}
    per_query: dict[str, Any] = {"units": [query_unit_id(rs, r) for r in rows], "protocols": {}}
    candidate_ids = [proposition_id(c) for c in rs.candidates] if rankings is not None else []
    for protocol in PROTOCOLS:
        removed = removed_candidates(rs, rows, protocol)
        ranked = score_rankings(scores, removed, top=max(KS))
        values: dict[str, list[float]] = {}
        for ranking, gold_set in zip(ranked, gold):
            for name, value in precision_recall_at(ranking, gold_set, KS).items():
                values.setdefault(name, []).append(100 * value)
        per_query["protocols"][protocol] = values
        results["protocols"][protocol] = mean_metrics(values)
        results["top1"][protocol] = top1_shares(rs, rows, ranked)
        if rankings is not None:
            rankings += ranking_rows(protocol, "proposition", per_query["units"], ranked, scores, gold,
                                     candidate_ids, list(range(len(candidate_ids))), removed)
        results["removed_per_query"][protocol] = sum(map(len, removed)) / max(1, len(removed))
        if protocol == "authors":
            per_query["removed"] = [r[0] if r else None for r in removed]
    per_query["proposition"] = per_query["protocols"]["authors"]
    results["proposition"] = results["protocols"]["authors"]
    # Table 4: every proposition of the query's own document is left out (never gold; it would rank first).
    excluded = removed_candidates(rs, rows, "own_document_excluded")
    for level, unit_key in (("sentence", lambda c: c.sentence_key), ("document", lambda c: c.document_id)):
        units = {key: i for i, key in enumerate(dict.fromkeys(unit_key(c) for c in rs.candidates))}
        unit_of = [units[unit_key(c)] for c in rs.candidates]
        unit_gold = [{unit_of[g] for g in gold_set} for gold_set in gold]
        removed = [e or None for e in excluded]
        ranked: list[list[int]] = []
        per_query[level] = per_query_scores(scores, unit_gold, removed, unit_of, len(units), rankings=ranked)
        if rankings is not None:
            rankings += ranking_rows(level, level, per_query["units"], ranked, scores, unit_gold,
                                     [unit_id(key) for key in units], unit_of, removed)
        results[level] = mean_metrics(per_query[level])
        results[f"{level}_units"] = len(units)
    results["per_query"] = per_query
    return results


def _rows_and_queries(rs: RetrievalSet, queries: Sequence[Proposition] | None, query_rows: Sequence[int] | None):
    rows = list(range(len(rs.queries))) if query_rows is None else list(query_rows)
    query_props = [rs.queries[r] for r in rows] if queries is None else list(queries)
    if len(query_props) != len(rows):
        raise ValueError(f"{len(query_props)} query propositions for {len(rows)} query rows")
    for row, prop in zip(rows, query_props):
        if prop.sentence_key != rs.queries[row].sentence_key:
            raise ValueError(f"query proposition {prop} stands in for query row {row} of another sentence "
                             f"({rs.queries[row].sentence_key})")
    return rows, query_props


def evaluate(model: SubEncoder, rs: RetrievalSet, *, strategy: str = "mask_pooling", batch_size: int = 32,
             queries: Sequence[Proposition] | None = None, query_rows: Sequence[int] | None = None,
             rankings: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Proposition- (every protocol), sentence- and document-level metrics of one encoder on ``rs``
    (``evaluate_scores`` of the cosine similarities; ``rankings``: its rankings rows, when given).

    ``queries``/``query_rows`` (Table 8): other query propositions (e.g. a segmenter's) standing in for
    the queries ``query_rows`` of ``rs`` (same sentence, same gold, same removed candidates); default:
    ``rs``'s own queries.
    """
    rows, query_props = _rows_and_queries(rs, queries, query_rows)
    candidates = encode_propositions(model, rs.sentences, proposition_spans(rs, rs.candidates),
                                     strategy=strategy, batch_size=batch_size)
    query_vectors = encode_propositions(model, rs.sentences, proposition_spans(rs, query_props),
                                        strategy=strategy, batch_size=batch_size)
    results = evaluate_scores(rs, cosine_matrix(query_vectors, candidates), rows, rankings)
    results["dim"] = int(candidates.shape[1])
    vectors_per_sentence = len(rs.candidates) / max(1, len({c.sentence_key for c in rs.candidates}))
    results["index"] = {"vectors_per_sentence": round(vectors_per_sentence, 3),
                        "bytes_per_vector_fp32": 4 * int(candidates.shape[1])}
    return results


def proposition_words(rs: RetrievalSet, prop: Proposition) -> set[str]:
    """The lexical baseline's words of a proposition: its PropSegment tokens, lower-cased, that hold a
    letter or digit (punctuation is left out)."""
    text, spans = rs.sentences[prop.sentence_key], rs.token_spans[prop.sentence_key]
    words = (text[a:b].lower() for a, b in (spans[t] for t in prop.token_indices))
    return {w for w in words if any(ch.isalnum() for ch in w)}


def word_jaccard_scores(rs: RetrievalSet, query_props: Sequence[Proposition]) -> torch.Tensor:
    """(Q, C) word-set Jaccard similarities of the queries and the candidates (``proposition_words``): the
    lexical baseline of Table 1, no model."""
    query_words = [proposition_words(rs, p) for p in query_props]
    candidate_words = [proposition_words(rs, c) for c in rs.candidates]
    vocabulary = {w: i for i, w in enumerate(sorted(set().union(*query_words, *candidate_words)))}

    def indicator(sets):
        matrix = torch.zeros(len(sets), max(1, len(vocabulary)))
        for row, words in enumerate(sets):
            matrix[row, [vocabulary[w] for w in words]] = 1.0
        return matrix

    q, c = indicator(query_words), indicator(candidate_words)
    shared = q @ c.T
    union = q.sum(1, keepdim=True) + c.sum(1) - shared
    return torch.where(union > 0, shared / union.clamp(min=1), torch.zeros_like(shared))


def evaluate_lexical(rs: RetrievalSet, queries: Sequence[Proposition] | None = None,
                     query_rows: Sequence[int] | None = None,
                     rankings: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The lexical baseline (``word_jaccard_scores``) under every protocol; ties go to the lower candidate
    index (candidates are ordered by document and sentence). ``rankings``: as ``evaluate_scores``'."""
    rows, query_props = _rows_and_queries(rs, queries, query_rows)
    results = evaluate_scores(rs, word_jaccard_scores(rs, query_props), rows, rankings)
    results["dim"] = None
    return results


def predicted_queries(rs: RetrievalSet, segment, align, threshold: float = 0.8
                      ) -> tuple[list[Proposition], list[int]]:
    """Table 8 (App. C.2; §5.3): segmenter-predicted propositions standing in for the gold queries.

    ``segment(sentences) -> list[list[str]]`` (the segmenter interface of
    ``multivec.subencoder.data.segmentation``) splits each query sentence into proposition texts;
    ``align(sentence, text) -> list[[start, end]]`` gives the character spans of a text's words in its
    sentence (App. A.3). A predicted proposition's PropSegment tokens are those overlapping its spans; a gold
    query is kept when the best predicted proposition of its sentence has token-set Jaccard > ``threshold``
    with it, and that prediction becomes its query. Returns (predicted propositions, rows of ``rs.queries``).
    """
    from multivec.subencoder.evaluation.retrieval_set import jaccard

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
