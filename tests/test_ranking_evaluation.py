"""Ranking evaluation from encodings or BM25, and the untrained-encoder baselines that feed it."""

import json

import numpy as np
import pytest

from multivec.baselines.base_encoder import encode_mean_pooled, encode_token_states, load_encoder
from multivec.encodings import Encodings, read_encodings, write_encodings
from multivec.evaluation.ranking_evaluation import evaluate_with_bm25, evaluate_with_encodings
from multivec.io import read_jsonl
from multivec.tasks.ranking_task import RankingQuery, RankingTask


def toy_task():
    docs = {"L0": "q0", "L1": "q1", "R0": "a", "R1": "b", "R2": "c"}
    queries = [RankingQuery("L0", ["R1", "R0", "R2"], 1), RankingQuery("L1", ["R0", "R1", "R2"], 1)]
    return RankingTask(docs, queries)


def toy_encodings():
    e = np.eye(3, dtype=np.float32)
    vectors = {"L0": np.stack([e[0], e[1]]),       # matches R0 (e0, e1) best
               "L1": np.stack([e[2]]),             # matches R2 (e2) best, but its answer is R1
               "R0": np.stack([e[0], e[1]]), "R1": np.stack([e[0], 0.5 * e[2] + e[1]]), "R2": np.stack([e[2]])}
    return Encodings(list(vectors), list(vectors.values()))


def test_maxsim_mean_evaluation_ranks_and_rows(tmp_path):
    result = evaluate_with_encodings(toy_task(), toy_encodings(), "maxsim_mean", show_progress=False)
    assert result.n_queries == 2 and result.method == "maxsim_mean"
    first, second = result.rankings
    assert first["predicted"] == 1 and first["rank_of_answer"] == 1
    np.testing.assert_allclose(first["scores"], [(1 + 2 / np.sqrt(5)) / 2, 1.0, 0.0], atol=1e-6)
    assert second["predicted"] == 2 and second["rank_of_answer"] == 2
    assert result.mrr == pytest.approx(100 * (1 + 0.5) / 2)
    assert result.write_rankings(tmp_path / "rankings.jsonl") == 2
    assert read_jsonl(tmp_path / "rankings.jsonl")[1]["candidates"] == ["R0", "R1", "R2"]


def test_cosine_evaluation_and_its_checks():
    means = toy_encodings()
    single = Encodings(means.ids, [v.mean(axis=0, keepdims=True) for v in means.vectors])
    result = evaluate_with_encodings(toy_task(), single, "cosine", show_progress=False)
    assert result.rankings[0]["rank_of_answer"] == 1
    with pytest.raises(ValueError, match="one vector per document"):
        evaluate_with_encodings(toy_task(), means, "cosine", show_progress=False)
    with pytest.raises(KeyError, match="no encoding"):
        evaluate_with_encodings(toy_task(), Encodings(means.ids[:4], means.vectors[:4]), show_progress=False)
    with pytest.raises(ValueError, match="similarity"):
        evaluate_with_encodings(toy_task(), means, "dot", show_progress=False)


def test_ties_go_against_the_answer_in_rankings():
    vectors = {i: np.ones((1, 2), np.float32) for i in ("L0", "L1", "R0", "R1", "R2")}
    result = evaluate_with_encodings(toy_task(), Encodings(list(vectors), list(vectors.values())), "cosine",
                                     show_progress=False)
    assert [r["rank_of_answer"] for r in result.rankings] == [3, 3]
    assert all(r["predicted"] != r["answer"] for r in result.rankings)


def test_bm25_on_released_pi_dev(mirror):
    task = RankingTask.load(mirror / "nugget-data/paraphrase_identification/dev")
    result = evaluate_with_bm25(task, show_progress=False)
    assert result.n_queries == 1024
    assert 98.3 < result.mrr < 98.7  # 98.49 with this tokeniser
    # the two empty queries score every candidate 0: pessimistic rank 20
    assert [r["rank_of_answer"] for r in result.rankings if r["source"] in ("L873", "L874")] == [20, 20]


def test_token_states_are_every_real_token_and_deterministic(tmp_path):
    texts = ["a lobster .", "", "the european lobster lives in the eastern atlantic ocean ."]
    tokenizer, _ = load_encoder("tiny-random-bert")
    n_tokens = [len(tokenizer(t)["input_ids"]) for t in texts]
    states = encode_token_states("tiny-random-bert", texts, batch_size=2, show_progress=False)
    assert [s.shape for s in states] == [(n, 32) for n in n_tokens]
    again = encode_token_states("tiny-random-bert", texts, batch_size=1, show_progress=False)
    assert all(np.allclose(a, b, atol=1e-5) for a, b in zip(states, again))  # padding does not leak in
    no_special = encode_token_states("tiny-random-bert", texts[::2], include_special_tokens=False, show_progress=False)
    assert [s.shape[0] for s in no_special] == [n_tokens[0] - 2, n_tokens[2] - 2]
    mean = encode_mean_pooled("tiny-random-bert", texts, show_progress=False)
    np.testing.assert_allclose(mean, np.stack([s.mean(axis=0) for s in states]), atol=1e-5)
    write_encodings(tmp_path / "enc", ["a", "b", "c"], states)
    assert [v.shape for v in read_encodings(tmp_path / "enc").vectors] == [s.shape for s in states]


def test_mean_pooling_matches_sentence_transformers_minilm():
    sentence_transformers = pytest.importorskip("sentence_transformers")
    from multivec.io.resources import resolve_model

    texts = ["Homarus gammarus is a species of clawed lobster .", "It is found in the eastern Atlantic ."]
    model = sentence_transformers.SentenceTransformer(resolve_model("minilm"), device="cpu")
    expected = model.encode(texts, convert_to_numpy=True)  # includes its Normalize module
    ours = encode_mean_pooled("minilm", texts, show_progress=False)
    np.testing.assert_allclose(ours / np.linalg.norm(ours, axis=1, keepdims=True), expected, atol=1e-5)


def test_baseline_encodings_artifact_feeds_the_evaluation(tmp_path):
    from multivec.baselines.base_encoder import write_baseline_encodings

    task = toy_task()
    write_baseline_encodings("tiny-random-bert", task.documents, tmp_path / "tokens", "tokens", show_progress=False)
    write_baseline_encodings("tiny-random-bert", task.documents, tmp_path / "mean", "mean", show_progress=False)
    tokens, mean = read_encodings(tmp_path / "tokens"), read_encodings(tmp_path / "mean")
    tokenizer, _ = load_encoder("tiny-random-bert")
    assert tokens.ids == list(task.documents)
    assert [len(v) for v in tokens.vectors] == [len(tokenizer(t)["input_ids"]) for t in task.documents.values()]
    assert all(len(v) == 1 for v in mean.vectors)
    for encodings, similarity in ((tokens, "maxsim_mean"), (mean, "cosine")):
        result = evaluate_with_encodings(task, encodings, similarity, show_progress=False)
        assert result.n_queries == 2 and 0 < result.mrr <= 100
    with pytest.raises(ValueError, match="pooling"):
        write_baseline_encodings("tiny-random-bert", task.documents, tmp_path / "x", "max", show_progress=False)


def test_row_metrics_are_grouped_by_row_then_task(tmp_path):
    from multivec.evaluation.ranking_evaluation import read_row_metrics

    paths = []
    for row, task, mrr in (("nugget", "pi", 90.0), ("nugget", "rr", 40.0), ("bm25", "pi", 80.0)):
        path = tmp_path / f"{row}_{task}.json"
        path.write_text(json.dumps({"row": row, "task": task, "mrr": mrr}))
        paths.append(path)
    metrics = read_row_metrics(paths)
    assert sorted(metrics) == ["bm25", "nugget"] and sorted(metrics["nugget"]) == ["pi", "rr"]
    assert metrics["nugget"]["rr"]["mrr"] == 40.0 and metrics["bm25"]["pi"]["mrr"] == 80.0
