"""The sub-sentence encoder's atomic-fact retrieval on PropSegment (Tables 1, 4, 5, 8;
``multivec.subencoder.evaluation.retrieval``) as TREC runs and qrels.

Each evaluation writes its rankings beside its JSON (``results/subencoder/<evaluation>.rankings.jsonl``; one row
per query and ranking: ``query``, ``ranking``, ``level``, ``ranked``, ``scores``, ``gold``, and ``part`` for
Table 8's gold and predicted queries). One ranking of one evaluation (``ranking``: a protocol's name at the
proposition level, ``authors``, ``own_sentence_excluded`` or ``own_document_excluded``; ``sentence`` or
``document``, Table 4's levels) becomes:

- a TREC run (``run_lines``): ``qid Q0 docid rank score run_name`` a line, each query's ranked units (the top 20,
  what the project's P@1 and R@5/10/20 read), best first;
- TREC qrels (``qrels_lines``): ``qid 0 docid 1`` for each gold unit of each query.

The query id is the evaluation unit of the statistics layer (``q<row>:<document>:<sentence>``; Table 8's
predicted query keeps its gold query's id); a unit id is a proposition's ``<document>:<sentence>:<tokens>``, a
sentence's ``<document>:<sentence>`` or a document's id (``trec_id`` makes each TREC-safe: no whitespace).

**Tie policy.** The project ranks units by score with a stable sort: tied units keep candidate order (the lower
candidate index first; candidates are ordered by document, sentence and the reference segmentation), whether
or not that favours the gold units. trec_eval (and pytrec_eval) order tied scores by document id, descending.
``ties="candidate_order"`` (the default) writes the project's order with strictly decreasing scores
(``n_ranked - rank + 1``; the original scores stay in the rankings JSONL), so trec_eval's ``P_1`` and
``recall_5`` (``recall_10``, ``recall_20``), averaged over the queries, are the project's P@1 and R@5 (R@10,
R@20) exactly: P@1 = 1 if the top unit is gold, R@k = |gold ∩ top k| / |gold|, trec_eval's definitions at
cutoffs 1 and k with every gold unit in the qrels (a gold candidate a protocol removed still counts in |gold|,
as in the project). ``ties="plain"`` writes the original scores of the same units (the project's top 20) and
leaves their ties to the evaluator, whose P@1 and R@k then differ wherever a tie straddles a cutoff.

A query whose ranking is empty (every candidate removed; the shipped data has none) has no run line: the project
scores it 0, trec_eval with ``-c`` too, and an evaluator without that option leaves it out of the mean.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterable

from multivec.interop.ranking_formats import _write

TIES = ("candidate_order", "plain")
RANKING_FIELDS = ("query", "ranking", "ranked", "scores", "gold")


def trec_id(text: Any) -> str:
    """A TREC-safe id: ``%`` and whitespace percent-encoded (one-to-one; the project's ids have neither)."""
    return re.sub(r"[%\s]", lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf-8")), str(text))


def select_rows(rows: Iterable[dict[str, Any]], ranking: str = "authors", part: str | None = None
                ) -> list[dict[str, Any]]:
    """The rows of one ranking (and, for Table 8's evaluations, one ``part``: gold or predicted queries)."""
    found = [row for row in rows if row["ranking"] == ranking and row.get("part") == part]
    if not found:
        raise ValueError(f"no ranking {ranking!r}{'' if part is None else f' of part {part!r}'} in the rankings")
    queries = [row["query"] for row in found]
    if len(set(queries)) != len(queries):
        raise ValueError(f"ranking {ranking!r}: a query has more than one row")
    return found


def run_lines(rows: Iterable[dict[str, Any]], run_name: str = "multivec", ties: str = "candidate_order"
              ) -> list[str]:
    """TREC run lines of rankings rows (``select_rows``'), in the project's order."""
    if ties not in TIES:
        raise ValueError(f"ties={ties!r}: expected one of {', '.join(TIES)}")
    lines = []
    for row in rows:
        qid, ranked, scores = trec_id(row["query"]), [trec_id(u) for u in row["ranked"]], list(row["scores"])
        if len(ranked) != len(scores):
            raise ValueError(f"query {qid}: {len(ranked)} ranked units but {len(scores)} scores")
        if len(set(ranked)) != len(ranked):
            raise ValueError(f"query {qid}: a unit is ranked twice")
        if ties == "candidate_order":
            written = [float(len(ranked) - position) for position in range(len(ranked))]
        else:
            written = [float(score) for score in scores]
        for position, (unit, score) in enumerate(zip(ranked, written), start=1):
            lines.append(f"{qid} Q0 {unit} {position} {score!r} {run_name}")
    return lines


def qrels_lines(rows: Iterable[dict[str, Any]]) -> list[str]:
    """TREC qrels lines: each gold unit of each query, relevance 1."""
    return [f"{trec_id(row['query'])} 0 {trec_id(unit)} 1" for row in rows for unit in row["gold"]]


def read_rankings(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The rows of a PropSegment rankings JSONL, checked for the fields a TREC export reads."""
    from multivec.io import MalformedInputError, read_jsonl

    rows = read_jsonl(path)
    for number, row in enumerate(rows, start=1):
        missing = set(RANKING_FIELDS) - set(row)
        if missing:
            raise MalformedInputError(path, number, f"missing field(s) {sorted(missing)} (not a PropSegment rankings "
                                      "file)")
    return rows


def write_propsegment_trec(rankings: str | os.PathLike, run_path: str | os.PathLike,
                           qrels_path: str | os.PathLike, ranking: str = "authors", part: str | None = None,
                           run_name: str | None = None, ties: str = "candidate_order") -> dict[str, Path]:
    """The TREC run and qrels of one ranking (and part) of a PropSegment rankings JSONL, at the paths given; the
    run name defaults to ``<rankings file stem>_<part>_<ranking>``."""
    rows = select_rows(read_rankings(rankings), ranking, part)
    name = run_name or "_".join(x for x in (Path(rankings).name.split(".")[0], part, ranking) if x)
    return {"run": _write(run_path, run_lines(rows, trec_id(name), ties)), "qrels": _write(qrels_path, qrels_lines(rows))}
