"""TREC runs and qrels of the sub-sentence encoder's PropSegment retrieval (multivec.interop.propsegment_formats):
on a synthetic retrieval set with many tied scores, pytrec_eval (trec_eval's bindings) gives the project's P@1 and
R@5 (and R@10, R@20) from the exported files exactly, for every protocol and for Table 4's sentence and document
levels, with the candidate-order tie policy; a plain export of the same scores gives other numbers."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

pytrec_eval = pytest.importorskip("pytrec_eval")

from multivec.interop.propsegment_formats import (qrels_lines, read_rankings, run_lines, select_rows,  # noqa: E402
                                                  trec_id, write_propsegment_trec)
from multivec.interop.ranking_formats import read_qrels, read_run  # noqa: E402
from multivec.subencoder.evaluation.retrieval import PROTOCOLS, evaluate_scores  # noqa: E402
from multivec.subencoder.evaluation.retrieval_set import Proposition, RetrievalSet  # noqa: E402

# pytrec_eval's measure -> the project's per-query metric (multivec.metrics.ranking.precision_recall_at)
MEASURES = {"P_1": "p@1", "recall_5": "r@5", "recall_10": "r@10", "recall_20": "r@20"}
RANKINGS = [*PROTOCOLS, "sentence", "document"]


def synthetic_set(seed: int = 0) -> RetrievalSet:
    """Six documents of 3 sentences, 2-3 propositions a sentence (one document id with a space, which the export
    must escape); 24 queries, half of them candidates, each with 1-3 gold candidates in other documents."""
    rng = np.random.default_rng(seed)
    documents = ["d0", "d1", "d2", "doc 3", "d4", "d5"]
    candidates = [Proposition(doc, s, tuple(range(3 * p, 3 * p + 2 + int(rng.integers(2)))))
                  for doc in documents for s in range(3) for p in range(2 + int(rng.integers(2)))]
    queries, gold, query_index = [], [], []
    for q in range(24):
        if q % 2:
            index = int(rng.integers(len(candidates)))
            query, own = candidates[index], index
        else:
            query, own = Proposition(documents[q % 6], q % 3, (20 + q,)), None
        others = [i for i, c in enumerate(candidates) if c.document_id != query.document_id]
        queries.append(query)
        gold.append({int(i) for i in rng.choice(others, size=1 + int(rng.integers(3)), replace=False)})
        query_index.append(own)
    return RetrievalSet(sentences={}, token_spans={}, candidates=candidates, queries=queries, gold=gold,
                        query_index=query_index)


def tied_scores(rs: RetrievalSet, seed: int = 0) -> torch.Tensor:
    """Scores on a coarse grid (many ties); the first four queries score every candidate alike (a constant
    scorer: the order is the tie policy's alone)."""
    rng = np.random.default_rng(seed)
    scores = torch.tensor(rng.integers(0, 4, size=(len(rs.queries), len(rs.candidates))) / 4, dtype=torch.float32)
    scores[:4] = 0.5
    return scores


def trec_means(run_path, qrels_path) -> dict[str, float]:
    """pytrec_eval's P_1 and recall_k, ×100, averaged over the qrels' queries (a query with no run line: 0)."""
    qrels = read_qrels(qrels_path)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES)).evaluate(read_run(run_path))
    return {name: float(np.mean([100 * per_query.get(q, {}).get(measure, 0.0) for q in qrels]))
            for measure, name in MEASURES.items()}


def project_metrics(result: dict, ranking: str, part: str | None = None) -> dict[str, float]:
    result = result[part] if part else result
    return result["protocols"][ranking] if ranking in PROTOCOLS else result[ranking]


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    rs = synthetic_set()
    rows: list[dict] = []
    result = evaluate_scores(rs, tied_scores(rs), range(len(rs.queries)), rows)
    path = tmp_path_factory.mktemp("propsegment") / "seed13.rankings.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return rs, result, path


def test_the_evaluation_is_the_same_with_or_without_its_rankings(evaluated):
    rs, result, path = evaluated
    assert evaluate_scores(rs, tied_scores(rs), range(len(rs.queries))) == result
    rows = read_rankings(path)
    assert len(rows) == len(RANKINGS) * len(rs.queries)
    assert {row["ranking"] for row in rows} == set(RANKINGS)
    for row in rows:  # the scores each unit was ranked by: non-increasing, best first
        assert row["scores"] == sorted(row["scores"], reverse=True) and len(row["ranked"]) <= 20
    row = next(r for r in rows if r["ranking"] == "sentence")
    assert all(u.count(":") == 1 for u in row["ranked"] + row["gold"])


@pytest.mark.parametrize("ranking", RANKINGS)
def test_pytrec_eval_gives_the_projects_p1_and_recall_exactly(evaluated, tmp_path, ranking):
    _, result, path = evaluated
    written = write_propsegment_trec(path, tmp_path / "run.trec", tmp_path / "qrels.trec", ranking)
    trec = trec_means(written["run"], written["qrels"])
    project = project_metrics(result, ranking)
    print(f"\n{ranking}: project P@1 {project['p@1']:.6f} R@5 {project['r@5']:.6f}; "
          f"pytrec_eval P_1 {trec['p@1']:.6f} recall_5 {trec['r@5']:.6f}")
    assert trec == {name: project[name] for name in MEASURES.values()}  # equal floats, not approximately
    text = written["run"].read_text(encoding="utf-8")
    assert all(len(line.split()) == 6 for line in text.splitlines())  # TREC-safe ids: no whitespace inside
    assert "doc%203:" in text and "doc 3" not in text
    assert text.split()[-1] == f"seed13_{ranking}"


def test_a_plain_export_leaves_ties_to_trec_eval_and_gives_other_numbers(evaluated, tmp_path):
    """The constant-score queries: the project keeps candidate order, trec_eval orders ties by document id,
    descending, so the plain export's top units differ (the whole difference is the tie policy)."""
    _, result, path = evaluated
    rows = select_rows(read_rankings(path), "authors")
    (tmp_path / "plain.trec").write_text("\n".join(run_lines(rows, ties="plain")) + "\n")
    (tmp_path / "qrels.trec").write_text("\n".join(qrels_lines(rows)) + "\n")
    plain = pytrec_eval.RelevanceEvaluator(read_qrels(tmp_path / "qrels.trec"), {"P_1"}).evaluate(
        read_run(tmp_path / "plain.trec"))
    for row in rows:
        scores = dict(zip(map(trec_id, row["ranked"]), row["scores"]))
        expected_top = sorted(scores, key=lambda u: (-scores[u], [-ord(ch) for ch in u]))[0]
        assert plain[trec_id(row["query"])]["P_1"] == float(expected_top in set(map(trec_id, row["gold"])))
    constant = rows[:4]
    assert all(len(set(row["scores"])) == 1 for row in constant)
    tops = [(row["ranked"][0], max(row["ranked"], key=trec_id)) for row in constant]
    assert any(project != trec for project, trec in tops)  # the two policies pick different top units
    means = trec_means(tmp_path / "plain.trec", tmp_path / "qrels.trec")
    print(f"\nauthors: project P@1 {result['proposition']['p@1']:.4f} R@5 {result['proposition']['r@5']:.4f}; "
          f"plain export P_1 {means['p@1']:.4f} recall_5 {means['r@5']:.4f}")
    assert means["p@1"] != result["proposition"]["p@1"] and means["r@5"] != result["proposition"]["r@5"]
    with pytest.raises(ValueError, match="ties='pessimistic'"):
        run_lines(rows, ties="pessimistic")


def test_table8_parts_are_told_apart_and_ids_are_trec_safe(evaluated, tmp_path):
    rs, result, path = evaluated
    rows = read_rankings(path)
    parts = [{"part": part, **row} for part in ("gold", "predicted") for row in rows]
    both = tmp_path / "seed13.rankings.jsonl"
    both.write_text("".join(json.dumps(row) + "\n" for row in parts), encoding="utf-8")
    for part in ("gold", "predicted"):
        written = write_propsegment_trec(both, tmp_path / f"{part}.run", tmp_path / f"{part}.qrels", "authors",
                                         part)
        assert trec_means(written["run"], written["qrels"]) == {name: result["protocols"]["authors"][name]
                                                                for name in MEASURES.values()}
        assert written["run"].read_text().split()[-1] == f"seed13_{part}_authors"
    with pytest.raises(ValueError, match="no ranking 'authors' of part 'gold'"):
        select_rows(rows, "authors", "gold")
    with pytest.raises(ValueError, match="more than one row"):
        select_rows(rows + rows, "authors")
    assert trec_id("doc 3:0:1,2") == "doc%203:0:1,2" and trec_id("50%\t") == "50%25%09"
    assert trec_id("q0:123:4") == "q0:123:4"
