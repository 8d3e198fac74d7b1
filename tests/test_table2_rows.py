"""Table 2 rows: shared base encodings, the mean-pooled row derived from them, table records."""

import numpy as np
import pytest

from multivec.encodings import write_encodings
from multivec.nugget.tables.table2 import assemble_table2
from multivec.nugget.tables.table2_rows import evaluate_row, row_encodings, row_metrics, table2_record
from multivec.tasks.ranking_task import RankingQuery, RankingTask


@pytest.fixture
def token_states(tmp_path):
    rng = np.random.default_rng(0)
    vectors = [rng.normal(size=(n, 8)).astype(np.float32) for n in (3, 5, 2, 4)]
    write_encodings(tmp_path / "enc", ["q", "a", "b", "c"], vectors)
    return tmp_path / "enc", vectors


def test_mean_pooled_row_is_the_mean_of_the_shared_token_states(token_states):
    path, vectors = token_states
    pooled = row_encodings({"name": "mp", "kind": "mean_pooled"}, path).vectors
    assert [v.shape for v in pooled] == [(1, 8)] * 4
    for got, states in zip(pooled, vectors):
        np.testing.assert_allclose(got[0], states.mean(axis=0), atol=2e-3)  # float16 on disk
    multi = row_encodings({"name": "colbart", "kind": "token_states"}, path).vectors
    assert [len(v) for v in multi] == [3, 5, 2, 4]


def test_rows_rank_with_their_similarity(token_states):
    path, vectors = token_states
    task = RankingTask({i: i for i in "qabc"}, [RankingQuery("q", ["a", "b", "c"], 1)])
    for kind, vectors_per_doc in (("token_states", 3.5), ("mean_pooled", 1.0)):
        row = {"name": kind, "kind": kind}
        result = evaluate_row(row, task, path)
        assert result.n_queries == 1 and 0 < result.mrr <= 100
        assert row_metrics(row, "pi", result, path)["vectors_per_doc"] == vectors_per_doc
        read_once = row_encodings(row, path)  # the rule reads a row's encodings once and passes them on
        assert evaluate_row(row, task, read_once).rankings == result.rankings
        assert row_metrics(row, "pi", result, read_once) == row_metrics(row, "pi", result, path)
    assert evaluate_row({"name": "bm25", "kind": "bm25"}, task, None).method == "bm25"


def test_table2_record_names_rows_as_the_paper_does():
    metrics = {"pi": {"mrr": 90.0, "n_queries": 4, "vectors_per_doc": 7.0},
               "rr": {"mrr": 50.0, "n_queries": 2, "vectors_per_doc": 9.0}}
    record = table2_record({"name": "n", "kind": "nugget", "objective": "mt", "ratio": 0.1}, metrics,
                           {"train_steps": 50, "train_minutes": 2.0})
    assert record["model"] == "NUGGET" and record["objective"] == "MT" and record["multi_vector"]
    assert record["vectors_per_doc"] == 8.0 and record["train_steps"] == 50
    table = assemble_table2([record])
    assert table.loc[0, "paper_PI"] == 96.69 and table.loc[0, "paper_RR"] == 50.04
    bm25 = table2_record({"name": "bm25", "kind": "bm25"},
                         {t: {"mrr": 1.0, "n_queries": 1} for t in ("pi", "rr")}, None)
    assert bm25["vectors_per_doc"] is None and not bm25["multi_vector"] and bm25["train_steps"] is None


def test_row_metrics_carry_the_truncation_into_table2_markdown(tmp_path):
    from multivec.baselines.base_encoder import write_baseline_encodings
    from multivec.nugget.tables.table2 import table2_markdown, truncation_lines

    words = "the lobster lives in the eastern atlantic".split()
    docs = {"q": "a lobster .", "a": " ".join(words * 90), "b": "sand and rocks ."}  # "a": > 512 subwords
    task = RankingTask(docs, [RankingQuery("q", ["a", "b"], 0)])
    write_baseline_encodings("tiny-random-bert", docs, tmp_path / "enc", show_progress=False)
    metrics = {}
    for kind in ("token_states", "mean_pooled"):
        row = {"name": kind, "kind": kind}
        metrics[kind] = {"pi": row_metrics(row, "pi", evaluate_row(row, task, tmp_path / "enc"), tmp_path / "enc")}
    cut = metrics["token_states"]["pi"]["truncation"]
    assert cut["truncated_documents"] == 1 and cut["documents"] == 3 and cut["max_tokens"] == 512
    metrics["bm25"] = {"pi": {"mrr": 50.0, "n_queries": 1}}  # no vectors, no truncation
    metrics["token_states"]["rr"] = {"truncation": {**cut, "truncated_documents": 0, "tokens_lost": 0}}
    lines = truncation_lines(metrics)
    share = 100 * cut["tokens_lost"] / cut["tokens"]
    assert lines[1] == (f"- PI: 1 of 3 documents truncated at 512 tokens, 33.3% of documents and {share:.2f}% "
                        "of tokens lost (every encoder).")
    assert lines[2] == "- RR: 0 of 3 documents truncated at 512 tokens, 0.0% of documents and 0.00% of tokens lost " \
                       "(every encoder)."
    table = assemble_table2([{"model": "ColBART"}])
    assert table2_markdown(table, "Scale: test.", lines).rstrip().endswith(lines[-1])
