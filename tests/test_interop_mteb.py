"""The ranking tasks as MTEB tasks and the rankings as MTEB results (multivec.interop.mteb_tasks): MTEB's own
evaluator gives the project's MRR from a pessimistic run, differs from it on ties exactly as trec_eval does, and
scores a sentence-transformers model on a project task as the project's mean-pooled pipeline does. The DAG's
MTEB files on the smoke build are checked in tests/test_interop_workflow.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("mteb")
pytrec_eval = pytest.importorskip("pytrec_eval")

ROUNDING = 1e-6  # MTEB writes MRR on a 0-1 scale rounded to 6 decimals

SENTENCES = [
    ("The cat sat on the mat all afternoon.", "All afternoon the cat was sitting on the mat."),
    ("Stock markets fell sharply after the announcement.", "Share prices dropped steeply following the news."),
    ("She plays the violin in the city orchestra.", "In the municipal orchestra she is a violinist."),
    ("Heavy rain flooded the streets of the old town.", "The old town's streets were flooded by heavy rain."),
    ("The committee postponed its decision until spring.", "A decision was delayed by the committee to spring."),
    ("He repaired the bicycle with a borrowed wrench.", "Using a wrench he had borrowed, he fixed the bike."),
    ("The museum opens a new exhibition on glass art.", "A new glass art exhibition is opening at the museum."),
    ("Engineers tested the bridge for three weeks.", "For three weeks the bridge was tested by engineers."),
]


def _task(n_candidates=5, seed=0):
    """A small PI-like task: each query's paraphrase among other sentences' paraphrases."""
    from multivec.tasks.ranking_task import RankingQuery, RankingTask

    rng = np.random.default_rng(seed)
    documents = {f"q{i}": query for i, (query, _) in enumerate(SENTENCES)}
    documents.update({f"p{i}": paraphrase for i, (_, paraphrase) in enumerate(SENTENCES)})
    queries = []
    for i in range(len(SENTENCES)):
        others = [f"p{j}" for j in rng.permutation(len(SENTENCES)) if j != i][: n_candidates - 1]
        answer = int(rng.integers(n_candidates))
        candidates = others[:answer] + [f"p{i}"] + others[answer:]
        queries.append(RankingQuery(f"q{i}", candidates, answer))
    return RankingTask(documents, queries)


def _tied_scores(task, seed=1):
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(task.n_queries, len(task.queries[0].candidates))).round(1)
    scores[:2] = 0.5  # a constant scorer on two queries: every candidate ties with the answer
    return scores


def _answers(task):
    return np.array([q.answer for q in task.queries])


def test_mteb_gives_the_projects_mrr_from_a_pessimistic_run_and_trec_evals_from_a_plain_one(tmp_path):
    from multivec.interop.mteb_tasks import main_score, write_mteb_results
    from multivec.interop.ranking_formats import read_qrels, read_run, write_beir, write_qrels, write_run
    from multivec.metrics.ranking import mrr_at

    task = _task()
    scores = _tied_scores(task)
    write_beir(task, tmp_path / "beir")
    write_run(tmp_path / "pessimistic.run", task, scores, ties="pessimistic")
    write_run(tmp_path / "plain.run", task, scores, ties="plain")
    write_qrels(tmp_path / "qrels", task)
    project = mrr_at(scores, _answers(task))
    pessimistic = write_mteb_results({"pi": tmp_path / "pessimistic.run"}, {"pi": tmp_path / "beir"},
                                     tmp_path / "mteb", "multivec/test_row", "smoke-seed13", "late-interaction")
    assert [p.relative_to(tmp_path) for p in pessimistic] == [
        tmp_path.joinpath("mteb/multivec__test_row/smoke-seed13/MultivecPI.json").relative_to(tmp_path)]
    assert 100 * main_score(pessimistic[0]) == pytest.approx(project, abs=100 * ROUNDING)
    meta = json.loads((pessimistic[0].parent / "model_meta.json").read_text())
    assert (meta["name"], meta["revision"], meta["model_type"]) == ("multivec/test_row", "smoke-seed13",
                                                                    ["late-interaction"])
    # A plain run leaves the ties to the evaluator: MTEB breaks them as trec_eval does, not as the project.
    plain = write_mteb_results({"pi": tmp_path / "plain.run"}, {"pi": tmp_path / "beir"}, tmp_path / "mteb",
                               "multivec/test_row_plain", "smoke-seed13")
    per_query = pytrec_eval.RelevanceEvaluator(read_qrels(tmp_path / "qrels"), {"recip_rank"}).evaluate(
        read_run(tmp_path / "plain.run"))
    trec = float(np.mean([m["recip_rank"] for m in per_query.values()]))
    print(f"\nproject MRR {project:.4f}; MTEB on the pessimistic run {100 * main_score(pessimistic[0]):.4f}, "
          f"on the plain run {100 * main_score(plain[0]):.4f}; trec_eval on the plain run {100 * trec:.4f}")
    assert main_score(plain[0]) == pytest.approx(trec, abs=ROUNDING)
    assert 100 * main_score(plain[0]) > project + 1  # the constant queries gain from the tie order


def test_minilm_through_mteb_scores_a_project_task_as_the_projects_mean_pooled_pipeline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    from multivec.baselines.base_encoder import encode_mean_pooled
    from multivec.evaluation.ranking_evaluation import evaluate_with_encodings
    from multivec.encodings import Encodings
    from multivec.interop.mteb_tasks import evaluate_into, main_score, reranking_task
    from multivec.interop.ranking_formats import write_beir
    from multivec.io.resources import minilm_path

    task = _task()
    write_beir(task, tmp_path / "beir")
    ids = task.used_document_ids()
    vectors = encode_mean_pooled(minilm_path(), [task.documents[i] for i in ids], show_progress=False)
    project = evaluate_with_encodings(task, Encodings(ids, [v[None, :] for v in vectors]),
                                      similarity="cosine", show_progress=False).mrr
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosine = {(a, b): float(unit[ids.index(a)] @ unit[ids.index(b)]) for q in task.queries for a in [q.source]
              for b in q.candidates}
    model = SentenceTransformer(minilm_path(), device="cpu")
    model.max_seq_length = 512  # the project's mean-pooled row reads up to the encoder's 512 positions
    model.model_card_data.model_name = "sentence-transformers/all-MiniLM-L6-v2"
    written = evaluate_into(model, [reranking_task(tmp_path / "beir", "pi")], tmp_path / "mteb",
                            prediction_folder=tmp_path / "predictions")
    got = 100 * main_score(written[0])
    predictions = json.loads(next((tmp_path / "predictions").glob("MultivecPI*.json")).read_text())["default"]["test"]
    differences = [abs(predictions[a][b] - value) for (a, b), value in cosine.items()]
    print(f"\nMiniLM mean-pooled MRR: project {project:.4f}, MTEB {got:.4f}; max |score difference| "
          f"{max(differences):.2e} over {len(differences)} pairs")
    assert max(differences) <= 1e-5  # the same vectors: every query-candidate score, not only the MRR
    assert got == pytest.approx(project, abs=100 * ROUNDING)
    assert written[0].parent.parent.name == "sentence-transformers__all-MiniLM-L6-v2"


def test_a_beir_folder_missing_a_file_or_a_run_of_another_task_is_refused(tmp_path):
    from multivec.interop.mteb_tasks import read_beir, write_mteb_results
    from multivec.interop.ranking_formats import write_beir, write_run

    task = _task()
    write_beir(task, tmp_path / "beir")
    (tmp_path / "beir" / "candidates.jsonl").unlink()
    with pytest.raises(FileNotFoundError, match=r"beir.*candidates\.jsonl"):
        read_beir(tmp_path / "beir")
    write_beir(task, tmp_path / "beir")
    other = _task(seed=5)  # the same queries, other candidates
    write_run(tmp_path / "other.run", other, _tied_scores(other))
    with pytest.raises(ValueError, match="other documents than the task's candidates"):
        write_mteb_results({"pi": tmp_path / "other.run"}, {"pi": tmp_path / "beir"}, tmp_path / "mteb", "m/x", "r")
    with pytest.raises(ValueError, match="runs for"):
        write_mteb_results({"pi": tmp_path / "other.run"}, {"rr": tmp_path / "beir"}, tmp_path / "mteb", "m/x", "r")


def test_a_task_with_more_candidates_than_mtebs_deepest_cutoff_is_ranked_whole(tmp_path):
    """MTEB keeps each query's top max(k_values) = 1,000 scores; a PropSegment query has about 1,600 candidates,
    so an answer ranked past 1,000 would be lost. The tasks add a cutoff at the deepest list: MTEB's MRR there,
    of a run whose answers rank 1 and 1,100 of 1,200, is the project's (1 + 1/1100) / 2; at 1,000 the second
    answer counts 0, as MTEB's cutoffs define."""
    from multivec.interop.mteb_tasks import reranking_task, write_mteb_results
    from multivec.interop.ranking_formats import write_beir, write_run
    from multivec.metrics.ranking import mrr_at
    from multivec.tasks.ranking_task import RankingQuery, RankingTask

    n = 1200
    documents = {"qa": "first query", "qb": "second query", **{f"c{j}": f"candidate {j}" for j in range(n)}}
    candidates = [f"c{j}" for j in range(n)]
    task = RankingTask(documents, [RankingQuery("qa", candidates, 0), RankingQuery("qb", candidates, 1099)])
    scores = np.tile(-np.arange(n, dtype=float), (2, 1))  # candidate j ranks j + 1
    write_beir(task, tmp_path / "beir")
    write_run(tmp_path / "run", task, scores, ties="pessimistic")
    project = mrr_at(scores, _answers(task))
    assert project == pytest.approx(100 * (1 + 1 / 1100) / 2)
    written = write_mteb_results({"pi": tmp_path / "run"}, {"pi": tmp_path / "beir"}, tmp_path / "mteb",
                                 "multivec/deep", "smoke")
    scores = json.loads(written[0].read_text())["scores"]["test"][0]
    assert 100 * scores[f"mrr_at_{n}"] == pytest.approx(project, abs=100 * ROUNDING)
    assert 100 * scores["mrr_at_1000"] == pytest.approx(50, abs=100 * ROUNDING)
    assert reranking_task(tmp_path / "beir", "pi")._top_k >= n


def test_every_propsegment_protocol_is_an_mteb_task_and_no_other():
    """The MTEB tasks name PropSegment's protocols a second time (for MTEB's task names and descriptions): a
    protocol added to or renamed in the evaluation must appear here too, with a name of its own."""
    from multivec.interop.mteb_tasks import PROPSEGMENT_TASKS, RERANKING_TASKS
    from multivec.subencoder.evaluation.retrieval import PROTOCOLS

    assert set(PROPSEGMENT_TASKS) == {f"propsegment_{protocol}" for protocol in PROTOCOLS}
    names = [name for name, _ in [*PROPSEGMENT_TASKS.values(), *RERANKING_TASKS.values()]]
    assert len(set(names)) == len(names)
