"""Demo evaluation of document embeddings (multivec.distill.evaluation.demo_tasks) against direct computations, and
its per-unit scores (what the distillation tables' CIs and tests are computed from) reproducing them."""

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

from multivec.distill.data.documents import LEE_SIZE
from multivec.distill.embeddings import write_embeddings
from multivec.distill.evaluation.demo_tasks import (evaluate_embeddings, evaluate_units, lee_correlations,
                                                    polarity_accuracy, task_files)
from multivec.io import write_docs_tsv, write_jsonl


def _lee_gold(folder, ratings):
    folder.mkdir(parents=True)
    (folder / "similarities.txt").write_text("\n".join("\t".join(f"{x:.6f}" for x in row) for row in ratings) + "\n")


def test_lee_correlations_match_a_direct_computation(tmp_path):
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(LEE_SIZE, 8))
    ratings = rng.uniform(size=(LEE_SIZE, LEE_SIZE))
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    pairs = [(i, j) for i in range(LEE_SIZE) for j in range(i + 1, LEE_SIZE)]
    cosines = [float(unit[i] @ unit[j]) for i, j in pairs]
    human = [ratings[i, j] for i, j in pairs]
    expected = {"lee_pearson": pearsonr(cosines, human)[0], "lee_spearman": spearmanr(cosines, human)[0]}
    assert lee_correlations(vectors, ratings) == pytest.approx(expected)
    # Through the artifact: ids lee_00..lee_49, stored in another order, and the gold folder.
    order = rng.permutation(LEE_SIZE)
    write_embeddings(tmp_path / "e", [f"lee_{n:02d}" for n in order], vectors[order], {})
    _lee_gold(tmp_path / "eval_lee", np.round(ratings, 6))
    got = evaluate_embeddings("lee", tmp_path / "e", {"task": str(tmp_path / "eval_lee")})
    assert got == pytest.approx(expected, abs=1e-4)


def test_lee_ratings_equal_to_cosine_correlate_perfectly():
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(LEE_SIZE, 4))
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    got = lee_correlations(vectors, unit @ unit.T)
    assert got["lee_pearson"] == pytest.approx(1.0) and got["lee_spearman"] == pytest.approx(1.0)


def test_polarity_accuracy_separable_and_random():
    rng = np.random.default_rng(0)
    labels = np.repeat([0, 1], 50)
    separable = rng.normal(size=(100, 5)) + labels[:, None] * 10.0
    assert polarity_accuracy(separable, labels)["polarity_accuracy"] == 100.0
    noise = polarity_accuracy(rng.normal(size=(100, 5)), labels)["polarity_accuracy"]
    assert 25 < noise < 75


def test_polarity_out_of_fold_accuracy_is_the_mean_of_the_folds_accuracies():
    # 200 sentences, 5 stratified folds of 40: the per-sentence mean equals cross_val_score's mean.
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from multivec.evaluation.document_tasks import FOLD_SEED

    rng = np.random.default_rng(3)
    labels = np.repeat([0, 1], 100)
    vectors = rng.normal(size=(200, 6)) + labels[:, None] * 0.5
    folds = cross_val_score(make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)), vectors, labels,
                            cv=StratifiedKFold(n_splits=5, shuffle=True, random_state=FOLD_SEED))
    assert polarity_accuracy(vectors, labels)["polarity_accuracy"] == pytest.approx(100 * folds.mean(), abs=1e-9)


def test_units_reproduce_every_summary_metric(tmp_path):
    """Lee pairs, polarity sentences and ranking queries: the statistic of the per-unit scores is the metric
    computed directly (scipy correlations, fold accuracies, MRR of the rankings)."""
    from multivec.statistics import compute_statistic

    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(LEE_SIZE, 8)).astype(np.float32)  # as stored
    ratings = rng.uniform(size=(LEE_SIZE, LEE_SIZE))
    ratings = np.round((ratings + ratings.T) / 2, 6)
    write_embeddings(tmp_path / "lee_e", [f"lee_{n:02d}" for n in range(LEE_SIZE)], vectors, {})
    _lee_gold(tmp_path / "eval_lee", ratings)
    units = evaluate_units("lee", tmp_path / "lee_e", {"task": str(tmp_path / "eval_lee")})
    direct = lee_correlations(vectors, ratings)
    pearson, spearman = units["lee_pearson"], units["lee_spearman"]
    assert len(pearson.units) == LEE_SIZE * (LEE_SIZE - 1) // 2 and pearson.units[0] == "lee_00|lee_01"
    assert (pearson.statistic, spearman.statistic) == ("pearson", "spearman")
    assert compute_statistic("pearson", pearson.values) == pytest.approx(direct["lee_pearson"], abs=1e-12)
    assert compute_statistic("spearman", spearman.values) == pytest.approx(direct["lee_spearman"], abs=1e-12)
    cosine, human = pearson.values[:, 0], pearson.values[:, 1]
    assert pearsonr(cosine, human)[0] == pytest.approx(direct["lee_pearson"], abs=1e-12)
    # polarity: one unit per sentence, 0 or 100
    gold = tmp_path / "eval_polarity"
    labels = np.repeat([0, 1], 20)
    write_jsonl(gold / "labels.jsonl", [{"id": f"s{k}", "label": int(y)} for k, y in enumerate(labels)])
    write_embeddings(tmp_path / "pol_e", [f"s{k}" for k in range(40)], rng.normal(size=(40, 4)) + labels[:, None], {})
    polarity = evaluate_units("polarity", tmp_path / "pol_e", {"task": str(gold)})["polarity_accuracy"]
    assert polarity.statistic == "mean" and polarity.units[:2] == ["s0", "s1"]
    assert set(np.unique(polarity.values)) <= {0.0, 100.0}
    assert polarity.value() == evaluate_embeddings("polarity", tmp_path / "pol_e", {"task": str(gold)})[
        "polarity_accuracy"]


def test_ranking_mrr_with_single_vector_cosine(tmp_path):
    # Two queries, three candidates each; the answers rank 1st and 2nd by cosine -> MRR = (1 + 1/2) / 2.
    gold = tmp_path / "eval_pi"
    docs = {"q1": "x", "q2": "x", "a": "x", "b": "x", "c": "x"}
    write_docs_tsv(gold / "docs.txt", docs)
    write_jsonl(gold / "task.jsonl", [{"source": "q1", "candidates": ["a", "b", "c"], "answer": 0},
                                      {"source": "q2", "candidates": ["a", "b", "c"], "answer": 2}])
    vectors = {"q1": [1, 0], "q2": [0, 1], "a": [1, 0.1], "b": [0.2, 1], "c": [0.5, 0.6]}
    write_embeddings(tmp_path / "e", list(vectors), np.array(list(vectors.values()), float), {})
    got = evaluate_embeddings("pi", tmp_path / "e", {"task": str(gold)})
    assert got == {"pi_mrr": pytest.approx(100 * (1 + 0.5) / 2)}
    per_query = evaluate_units("pi", tmp_path / "e", {"task": str(gold)})["pi_mrr"]
    # The unit ids are Table 2's (position and source, ranking_task.query_unit_id): the works' queries pair up.
    assert per_query.units == ["0:q1", "1:q2"] and per_query.values.tolist() == [100.0, 50.0]
    # The documents file eval_pi.jsonl names the same gold folder beside it.
    assert evaluate_embeddings("pi", tmp_path / "e", {"documents": str(tmp_path / "eval_pi.jsonl")}) == got


def test_ranking_units_are_bit_for_bit_100_over_the_rankings_rank(tmp_path):
    """The per-query scores (ranks from ``multivec.metrics.ranking``) are exactly ``100.0 / rank_of_answer`` of
    ``ranking_evaluation``'s rankings on the same cosines, tied candidates included (float32 vectors, as stored)."""
    from multivec.evaluation.document_tasks import unit_rows as _unit
    from multivec.evaluation.ranking_evaluation import result_from_scores
    from multivec.tasks.ranking_task import RankingTask

    rng = np.random.default_rng(11)
    n_docs, n_candidates = 80, 20
    ids = [f"d{k}" for k in range(n_docs)]
    vectors = rng.normal(size=(n_docs, 6)).astype(np.float32)
    vectors[1::3] = vectors[0:-1:3]  # duplicated documents: cosine ties with the answer
    gold = tmp_path / "eval_rr"
    write_docs_tsv(gold / "docs.txt", {i: "x" for i in ids})
    sources, pool = ids[:n_docs - n_candidates], ids[n_docs - n_candidates:]  # a source is no candidate
    write_jsonl(gold / "task.jsonl", [{"source": source,
                                       "candidates": [pool[int(c)] for c in rng.permutation(n_candidates)],
                                       "answer": int(rng.integers(n_candidates))} for source in sources])
    write_embeddings(tmp_path / "e", ids, vectors, {})
    got = evaluate_units("rr", tmp_path / "e", {"task": str(gold)})["rr_mrr"].values
    task = RankingTask.load(gold)
    unit = dict(zip(ids, _unit(vectors)))
    scores = np.einsum("qd,qcd->qc", np.array([unit[q.source] for q in task.queries]),
                       np.array([[unit[c] for c in q.candidates] for q in task.queries]))
    old = np.array([100.0 / row["rank_of_answer"] for row in result_from_scores(task, scores, "x").rankings])
    assert np.array_equal(got, old) and got.dtype == old.dtype
    assert len(set(old.tolist())) > 5 and 100.0 / 3 in old  # 100 * (1 / 3) != 100 / 3


def test_bad_task_or_files_are_named(tmp_path):
    with pytest.raises(ValueError, match="unknown distillation evaluation task 'imdb'"):
        evaluate_embeddings("imdb", tmp_path, {"task": str(tmp_path)})
    with pytest.raises(KeyError, match="needs key 'task'.*or 'documents'"):
        evaluate_embeddings("lee", tmp_path, {})
    assert task_files("rr") == {"task": "data/built/distill/eval_rr"}


def test_a_paired_comparison_of_two_runs_gives_their_difference_its_ci_and_p():
    """The experiments' comparison of two embeddings on the same units (multivec.distill.evaluation.demo_tasks.
    paired_comparison): the same run against itself differs by 0 with p = 1; a run better on every unit
    differs by its margin, with a CI around it and a small p."""
    from multivec.distill.evaluation.demo_tasks import UnitScores, paired_comparison

    rng = np.random.default_rng(0)
    units = [f"q{i}" for i in range(60)]
    base = UnitScores("mean", units, rng.uniform(0, 1, size=60))
    same = paired_comparison(base, base)
    assert same["difference"] == 0 and same["p"] == 1 and same["value"] == same["against_value"]
    better = UnitScores("mean", units, base.values + 0.1)
    result = paired_comparison(better, base)
    assert result["difference"] == pytest.approx(0.1, abs=1e-4)
    assert result["lo"] <= 0.1 <= result["hi"] and result["p"] < 0.01
