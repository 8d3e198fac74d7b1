"""The ranking evaluations (NUGGET §6.1's PI and RR, ``multivec.tasks.ranking_task``) in the field's formats.

- TREC qrels (``write_qrels``): ``qid 0 docid 1`` a line, the query's answer the one relevant document; a query
  id is its source document's id (sources are unique in a task).
- TREC run (``write_run``): ``qid Q0 docid rank score run_name`` a line, each query's 20 candidates. The project's
  MRR (``multivec.metrics.ranking``) ranks ties **pessimistically**: a candidate that scores exactly as high as the
  answer is ranked above it (a constant scorer must not gain from the released PI set listing the answer first in
  1000 of its 1024 queries). trec_eval and its bindings instead order tied scores by document id, so the same
  scores can give another MRR. ``ties="pessimistic"`` (the default) writes the project's order with strictly
  decreasing scores (``n_candidates - rank + 1``; the original scores stay in the rankings JSONL), so any TREC
  evaluator reproduces the project's MRR exactly; ``ties="plain"`` writes the original scores and leaves ties to
  the evaluator.
- BEIR layout (``write_beir``): ``corpus.jsonl`` (``_id``, ``title``, ``text``: every candidate document),
  ``queries.jsonl`` (``_id``, ``text``: each query's source document) and ``qrels/test.tsv`` (``query-id``,
  ``corpus-id``, ``score``). The tasks are reranking tasks (20 candidates a query, not the whole corpus), which
  BEIR's layout has no file for: ``candidates.jsonl`` (``query-id``, ``corpus-ids``) lists them; a retriever
  evaluated over the whole corpus solves a different, harder task.

``run_from_rankings`` (``write_trec``: any two paths) reads the rankings JSONL the evaluation writes (``RankingResult.write_rankings``;
``results/table2/<run>/<task>.rankings.jsonl``), ``scores_of`` turns a run back into a score matrix.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

TIES = ("pessimistic", "plain")


def pessimistic_order(scores: Sequence[float], answer: int) -> list[int]:
    """Candidate indices best first, ties broken against the answer (then by candidate order), so the answer's
    position is ``multivec.metrics.ranking.ranks_of_answers``'s rank."""
    return sorted(range(len(scores)), key=lambda i: (-float(scores[i]), i == answer, i))


def run_lines(rows: Iterable[dict[str, Any]], run_name: str = "multivec", ties: str = "pessimistic") -> list[str]:
    """TREC run lines of ranking rows (``source``, ``candidates``, ``scores``, ``answer``)."""
    if ties not in TIES:
        raise ValueError(f"ties={ties!r}: expected one of {', '.join(TIES)}")
    lines = []
    for row in rows:
        qid, candidates, scores = str(row["source"]), list(row["candidates"]), list(row["scores"])
        if len(candidates) != len(scores):
            raise ValueError(f"query {qid}: {len(candidates)} candidates but {len(scores)} scores")
        if ties == "pessimistic":
            order = pessimistic_order(scores, int(row["answer"]))
            written = [float(len(order) - position) for position in range(len(order))]
        else:
            order = sorted(range(len(scores)), key=lambda i: (-float(scores[i]), i))
            written = [float(scores[i]) for i in order]
        for position, (i, score) in enumerate(zip(order, written), start=1):
            lines.append(f"{qid} Q0 {candidates[i]} {position} {score!r} {run_name}")
    return lines


def qrels_lines(rows: Iterable[dict[str, Any]]) -> list[str]:
    """TREC qrels lines: each query's answer, relevance 1."""
    return [f"{row['source']} 0 {row['candidates'][int(row['answer'])]} 1" for row in rows]


def task_rows(task, scores: np.ndarray | None = None) -> list[dict[str, Any]]:
    """Rows of a ``RankingTask`` (with a score matrix, n_queries × n_candidates, when given)."""
    rows = []
    for number, query in enumerate(task.queries):
        row = {"source": query.source, "candidates": list(query.candidates), "answer": int(query.answer)}
        if scores is not None:
            row["scores"] = [float(s) for s in scores[number]]
        rows.append(row)
    return rows


def _write(path: str | os.PathLike, lines: list[str]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def write_run(path: str | os.PathLike, task, scores: np.ndarray, run_name: str = "multivec",
              ties: str = "pessimistic") -> Path:
    """Write a TREC run of ``scores`` (n_queries × n_candidates) over ``task``'s candidates."""
    return _write(path, run_lines(task_rows(task, np.asarray(scores)), run_name, ties))


def write_qrels(path: str | os.PathLike, task) -> Path:
    """Write ``task``'s TREC qrels (the answer of each query)."""
    return _write(path, qrels_lines(task_rows(task)))


def write_trec(rankings: str | os.PathLike, run_path: str | os.PathLike, qrels_path: str | os.PathLike,
               run_name: str | None = None, ties: str = "pessimistic") -> dict[str, Path]:
    """A TREC run and its qrels, at the paths given, from a rankings JSONL (``RankingResult.write_rankings``); the
    run name defaults to the rankings file's stem."""
    from multivec.io import MalformedInputError, read_jsonl

    rows = read_jsonl(rankings)
    for number, row in enumerate(rows, start=1):
        missing = {"source", "candidates", "scores", "answer"} - set(row)
        if missing:
            raise MalformedInputError(rankings, number, f"missing field(s) {sorted(missing)} (not a rankings file)")
    name = run_name or Path(rankings).name.split(".")[0]
    return {"run": _write(run_path, run_lines(rows, name, ties)), "qrels": _write(qrels_path, qrels_lines(rows))}


def run_from_rankings(rankings: str | os.PathLike, out_dir: str | os.PathLike, run_name: str | None = None,
                      ties: str = "pessimistic") -> dict[str, Path]:
    """``run.trec`` and ``qrels.trec`` in ``out_dir`` from a rankings JSONL (``RankingResult.write_rankings``)."""
    out = Path(out_dir)
    return write_trec(rankings, out / "run.trec", out / "qrels.trec", run_name, ties)


def read_run(path: str | os.PathLike) -> dict[str, dict[str, float]]:
    """A TREC run as ``{qid: {docid: score}}`` (pytrec_eval's and ranx's input)."""
    run: dict[str, dict[str, float]] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        qid, _, docid, _, score, _ = line.split()
        run.setdefault(qid, {})[docid] = float(score)
    return run


def read_qrels(path: str | os.PathLike) -> dict[str, dict[str, int]]:
    """TREC qrels as ``{qid: {docid: relevance}}``."""
    qrels: dict[str, dict[str, int]] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        qid, _, docid, relevance = line.split()
        qrels.setdefault(qid, {})[docid] = int(relevance)
    return qrels


def write_beir(task, folder: str | os.PathLike, split: str = "test") -> dict[str, Path]:
    """The task in BEIR's layout (see the module docstring) under ``folder``."""
    folder = Path(folder)
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    corpus_ids = list(dict.fromkeys(c for q in task.queries for c in q.candidates))

    def jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> Path:
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        return path

    return {
        "corpus": jsonl(folder / "corpus.jsonl", ({"_id": i, "title": "", "text": task.documents[i]}
                                                  for i in corpus_ids)),
        "queries": jsonl(folder / "queries.jsonl", ({"_id": q.source, "text": task.documents[q.source]}
                                                    for q in task.queries)),
        "qrels": _write(folder / "qrels" / f"{split}.tsv", ["query-id\tcorpus-id\tscore"]
                        + [f"{q.source}\t{q.answer_id}\t1" for q in task.queries]),
        "candidates": jsonl(folder / "candidates.jsonl", ({"query-id": q.source, "corpus-ids": list(q.candidates)}
                                                          for q in task.queries)),
    }
