"""TREC runs and qrels and the BEIR layout of a ranking evaluation (multivec.interop.ranking_formats): an
independent evaluator (pytrec_eval, trec_eval's bindings) computes the project's MRR from the exported files,
exactly with the pessimistic tie policy, and differently from a plain export when scores tie."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")


def _task(n_queries=12, n_candidates=5, seed=0):
    from multivec.tasks.ranking_task import RankingQuery, RankingTask

    rng = np.random.default_rng(seed)
    documents, queries = {}, []
    for q in range(n_queries):
        source = f"q{q:02d}"
        documents[source] = f"query document {q}"
        candidates = [f"d{q:02d}_{c}" for c in range(n_candidates)]
        for c in candidates:
            documents[c] = f"candidate {c}"
        # As the released PI set: the answer is listed first in most queries.
        answer = 0 if q % 4 else int(rng.integers(n_candidates))
        queries.append(RankingQuery(source, candidates, answer))
    return RankingTask(documents, queries)


def _scores(task, seed=0):
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(task.n_queries, 5)).round(1)
    scores[:3] = 0.5  # constant scorer on three queries: every candidate ties with the answer
    scores[3, :] = [0.2, 0.9, 0.2, 0.2, 0.1]
    scores[3, task.queries[3].answer] = 0.2  # a partial tie
    return scores


def _trec_mrr(run_path, qrels_path):
    from multivec.interop.ranking_formats import read_qrels, read_run

    evaluator = pytrec_eval.RelevanceEvaluator(read_qrels(qrels_path), {"recip_rank"})
    per_query = evaluator.evaluate(read_run(run_path))
    return 100.0 * float(np.mean([m["recip_rank"] for m in per_query.values()])), per_query


def test_pytrec_eval_gives_the_projects_mrr_from_a_pessimistic_run_and_differs_on_ties_from_a_plain_one(tmp_path):
    from multivec.interop import write_qrels, write_run
    from multivec.metrics.ranking import mrr_at

    task, scores = _task(), None
    scores = _scores(task)
    answers = np.array([q.answer for q in task.queries])
    project = mrr_at(scores, answers)
    write_qrels(tmp_path / "qrels.trec", task)
    write_run(tmp_path / "run.trec", task, scores, ties="pessimistic")
    trec, _ = _trec_mrr(tmp_path / "run.trec", tmp_path / "qrels.trec")
    print(f"\nproject MRR {project:.6f}, pytrec_eval on the pessimistic run {trec:.6f}")
    assert trec == pytest.approx(project, abs=1e-9)

    write_run(tmp_path / "plain.trec", task, scores, ties="plain")
    plain, per_query = _trec_mrr(tmp_path / "plain.trec", tmp_path / "qrels.trec")
    print(f"pytrec_eval on the plain run {plain:.6f} (ties ordered by the evaluator)")
    assert plain > project  # the tied queries gain: the answer is not ranked below its ties
    # The whole difference is the tie policy: trec_eval orders tied scores by document id, descending.
    by_docid = []
    for query, row in zip(task.queries, scores):
        order = sorted(range(len(row)), key=lambda i: (-row[i], [-ord(ch) for ch in query.candidates[i]]))
        by_docid.append(1.0 / (order.index(query.answer) + 1))
    assert plain == pytest.approx(100.0 * np.mean(by_docid), abs=1e-9)
    untied = [i for i, row in enumerate(scores) if len(set(row)) == len(row)]
    for i in untied:  # without ties the two exports agree query by query
        assert per_query[task.queries[i].source]["recip_rank"] == pytest.approx(
            1.0 / (1 + (scores[i] > scores[i, task.queries[i].answer]).sum()))


def test_the_beir_layout_holds_the_task_and_evaluates_like_the_trec_qrels(tmp_path):
    from multivec.interop import write_beir, write_qrels, write_run

    task = _task()
    written = write_beir(task, tmp_path / "beir")
    corpus = [json.loads(line) for line in written["corpus"].read_text().splitlines()]
    queries = [json.loads(line) for line in written["queries"].read_text().splitlines()]
    lines = written["qrels"].read_text().splitlines()
    assert lines[0] == "query-id\tcorpus-id\tscore" and len(lines) == 1 + task.n_queries
    assert {c["_id"] for c in corpus} == {c for q in task.queries for c in q.candidates}
    assert all(set(c) == {"_id", "title", "text"} for c in corpus)
    assert [q["_id"] for q in queries] == [q.source for q in task.queries]
    assert queries[0]["text"] == task.documents[task.queries[0].source]
    candidates = [json.loads(line) for line in written["candidates"].read_text().splitlines()]
    assert candidates[1] == {"query-id": task.queries[1].source, "corpus-ids": task.queries[1].candidates}
    beir_qrels = {}
    for line in lines[1:]:
        qid, docid, score = line.split("\t")
        beir_qrels.setdefault(qid, {})[docid] = int(score)
    write_qrels(tmp_path / "qrels.trec", task)
    from multivec.interop.ranking_formats import read_qrels

    assert beir_qrels == read_qrels(tmp_path / "qrels.trec")
    write_run(tmp_path / "run.trec", task, _scores(task))
    from multivec.interop.ranking_formats import read_run

    on_beir = pytrec_eval.RelevanceEvaluator(beir_qrels, {"recip_rank"}).evaluate(read_run(tmp_path / "run.trec"))
    assert _trec_mrr(tmp_path / "run.trec", tmp_path / "qrels.trec")[0] == pytest.approx(
        100.0 * np.mean([m["recip_rank"] for m in on_beir.values()]))


def test_export_run_writes_the_evaluations_rankings_as_trec_files(tmp_path, capsys):
    from multivec.__main__ import main
    from multivec.evaluation.ranking_evaluation import result_from_scores

    task = _task()
    task.save(tmp_path / "task")
    result = result_from_scores(task, _scores(task), "cosine")
    result.write_rankings(tmp_path / "pi.rankings.jsonl")
    assert main(["export-run", str(tmp_path / "pi.rankings.jsonl"), str(tmp_path / "out"),
                 "--task", str(tmp_path / "task")]) == 0
    assert "run: " in capsys.readouterr().out
    trec, _ = _trec_mrr(tmp_path / "out" / "run.trec", tmp_path / "out" / "qrels.trec")
    assert trec == pytest.approx(result.mrr, abs=1e-9)
    assert (tmp_path / "out" / "run.trec").read_text().split("\n")[0].endswith(" pi")
    assert (tmp_path / "out" / "beir" / "qrels" / "test.tsv").is_file()
    (tmp_path / "bad.jsonl").write_text('{"source": "q00"}\n')
    assert main(["export-run", str(tmp_path / "bad.jsonl"), str(tmp_path / "out2")]) == 1
    assert "bad.jsonl:1: missing field(s)" in capsys.readouterr().err
