"""PropSegment's atomic-fact retrieval (Chen et al. 2023, §4.2.1; ``multivec.subencoder.evaluation.retrieval``) as
BEIR folders that any sentence encoder reads: each proposition written as text, App. C.1's third encoding of a
proposition for a sentence encoder ("token subset only": take the subset of tokens and discard the rest).
``multivec.interop.mteb_tasks.reranking_task(folder, "propsegment_<protocol>")`` reads one as an MTEB task.

**Text of a proposition** (``proposition_text``): its PropSegment tokens in sentence order, each as the sentence
has it (``sentence[start:end]`` of the token's character span). Two consecutive selected tokens are joined with
nothing when they are neighbours in the sentence (tokens t and t+1) with no character between them
(``Curie`` + ``'s`` -> ``Curie's``, ``(`` + ``1867`` + ``)`` -> ``(1867)``), and with one space otherwise:
whitespace between them in the sentence, or tokens of the sentence left out between them (which would otherwise
glue two words into one that the sentence does not have). So a WordPiece or BPE tokenizer splits the text into
(nearly) the subwords that the project's ``token_subset`` encoding keeps of the tokenised sentence
(``multivec.subencoder.model``: the proposition's subwords inside the special tokens). They differ where a
selected token starts inside a word of the sentence (a continuation subword there, a word-initial one here) and
where a subword of the sentence straddles a selected and a left-out token (outside the project's mask; here the
selected part is split anew). The encoding also differs: a sentence-transformers model mean-pools over the
special tokens too, the project's ``token_subset`` over the proposition's subwords only (docs/interop.md gives
what this changes on the dev set).

**Folder** (``write_propsegment_beir``; the layout of ``multivec.interop.ranking_formats.write_beir``):

- ``corpus.jsonl``: every candidate proposition (``_id``: ``proposition_id``, ``title`` empty, ``text``);
- ``queries.jsonl``: every query proposition (``_id``: the evaluation unit id, ``query_unit_id``);
- ``qrels/test.tsv``: each query's gold candidates, relevance 1 (the qrels of the TREC export of the same
  evaluation, ``multivec.interop.propsegment_formats``: same ids, ``trec_id``-safe);
- ``candidates.jsonl``: each query's candidates under one protocol (``PROTOCOLS``: ``authors`` leaves out the
  query itself when it is a candidate, ``own_sentence_excluded`` every candidate of its sentence,
  ``own_document_excluded`` every candidate of its document), in candidate order. One folder per protocol.

**Ties.** The folder holds no scores: the evaluator ranks. The project ranks tied candidates in candidate order
(a stable sort); MTEB (pytrec_eval) orders tied scores by document id, descending. A sentence encoder gives equal
scores to equal texts, so the two can differ only where two candidates with the same text tie across the cutoff
(P@1: the top; R@5: the fifth place).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Sequence

from multivec.interop.propsegment_formats import trec_id
from multivec.interop.ranking_formats import _write

FOLDER = "propsegment_{protocol}"  # exports/beir/<FOLDER>; also the task key of mteb_tasks.reranking_task


def proposition_text(sentence: str, token_spans: Sequence[Sequence[int]], token_indices: Sequence[int]) -> str:
    """The proposition's tokens taken from the sentence (module doc): neighbouring tokens that touch are joined
    as the sentence joins them, every other pair by one space."""
    parts: list[str] = []
    previous: tuple[int, int] | None = None  # (token index, end) of the last token written
    for index in sorted(token_indices):
        start, end = token_spans[index]
        if previous is not None:
            parts.append("" if (index == previous[0] + 1 and start == previous[1]) else " ")
        parts.append(sentence[start:end])
        previous = (index, end)
    return "".join(parts)


def retrieval_proposition_text(rs, prop) -> str:
    """``proposition_text`` of a proposition of the retrieval set ``rs``."""
    return proposition_text(rs.sentences[prop.sentence_key], rs.token_spans[prop.sentence_key], prop.token_indices)


QUERY_PREFIX, CANDIDATE_PREFIX = "query:", "candidate:"


def retrieval_set_documents(rs) -> list[dict[str, str]]:
    """Every query and candidate proposition of ``rs`` as a document ``{"id", "text"}`` (its text:
    ``proposition_text``), for an encoder of whole texts (the distillation work's embeddings): queries first, ids
    ``query:<query_unit_id>``, then candidates, ``candidate:<proposition_id>`` (a query may also be a candidate)."""
    from multivec.subencoder.evaluation.retrieval import proposition_id, query_unit_id

    return ([{"id": QUERY_PREFIX + query_unit_id(rs, row), "text": retrieval_proposition_text(rs, prop)}
             for row, prop in enumerate(rs.queries)]
            + [{"id": CANDIDATE_PREFIX + proposition_id(prop), "text": retrieval_proposition_text(rs, prop)}
               for prop in rs.candidates])


def write_propsegment_beir(rs, folder: str | os.PathLike, protocol: str = "authors", split: str = "test"
                           ) -> dict[str, Path]:
    """The retrieval set ``rs`` (``build_retrieval_set``) in BEIR's layout under ``folder``, each query's
    candidates those ``protocol`` leaves (module doc)."""
    from multivec.subencoder.evaluation.retrieval import proposition_id, query_unit_id, removed_candidates

    rows = list(range(len(rs.queries)))
    removed = removed_candidates(rs, rows, protocol)  # a ValueError naming the protocols for an unknown one
    folder = Path(folder)
    candidate_ids = [trec_id(proposition_id(c)) for c in rs.candidates]
    query_ids = [trec_id(query_unit_id(rs, row)) for row in rows]

    def text(prop) -> str:
        return retrieval_proposition_text(rs, prop)

    def kept(out: Sequence[int]) -> list[str]:
        left_out = set(out)
        return [i for c, i in enumerate(candidate_ids) if c not in left_out]

    def jsonl(name: str, records) -> Path:
        return _write(folder / name, [json.dumps(r, ensure_ascii=False) for r in records])

    return {
        "corpus": jsonl("corpus.jsonl", ({"_id": i, "title": "", "text": text(c)}
                                         for i, c in zip(candidate_ids, rs.candidates))),
        "queries": jsonl("queries.jsonl", ({"_id": q, "text": text(p)} for q, p in zip(query_ids, rs.queries))),
        "qrels": _write(folder / "qrels" / f"{split}.tsv", ["query-id\tcorpus-id\tscore"]
                        + [f"{q}\t{candidate_ids[g]}\t1" for q, gold in zip(query_ids, rs.gold) for g in sorted(gold)]),
        "candidates": jsonl("candidates.jsonl", ({"query-id": q, "corpus-ids": kept(out)}
                                                 for q, out in zip(query_ids, removed))),
    }


def propsegment_units(rs, vectors_by_id: dict, protocol: str = "authors") -> dict:
    """A single-vector text encoder on PropSegment atomic-fact retrieval (``multivec.subencoder.evaluation``): each
    query proposition's and candidate's vector (ids of ``retrieval_set_documents``),
    candidates ranked by cosine under ``protocol``, per-query P@1 and R@5 x 100 with the query unit ids of the
    sub-sentence encoder's tables (the same scorer, so the cells pair up)."""
    import numpy as np
    import torch

    from multivec.evaluation.document_tasks import UnitScores
    from multivec.metrics.maxsim import cosine_matrix
    from multivec.subencoder.evaluation.retrieval import evaluate_scores, proposition_id, query_unit_id

    rows = list(range(len(rs.queries)))
    query_ids = [QUERY_PREFIX + query_unit_id(rs, row) for row in rows]
    candidate_ids = [CANDIDATE_PREFIX + proposition_id(c) for c in rs.candidates]
    missing = [i for i in query_ids + candidate_ids if i not in vectors_by_id]
    if missing:
        raise KeyError(f"PropSegment: the embeddings lack {len(missing)} of the {len(query_ids)} queries and "
                       f"{len(candidate_ids)} candidates (first: {missing[:3]})")

    def matrix(ids):
        return torch.as_tensor(np.stack([np.asarray(vectors_by_id[i]).reshape(-1) for i in ids]))

    result = evaluate_scores(rs, cosine_matrix(matrix(query_ids), matrix(candidate_ids)), rows)
    per_query = result["per_query"]
    values = per_query["protocols"][protocol]
    return {metric: UnitScores("mean", list(per_query["units"]), np.asarray(values[key], dtype=np.float64))
            for metric, key in (("P@1", "p@1"), ("R@5", "r@5"))}
