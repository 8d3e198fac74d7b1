"""NUGGET Table 1: task sizes and lengths, ours beside the paper's."""

import pandas as pd
import pytest

from multivec.nugget.tables.table1 import (PAPER_TABLE1, TABLE1_COLUMNS, assemble_table1, task_statistics,
                                        unknown_tokens_of, write_table1)
from multivec.tasks.ranking_task import RankingQuery, RankingTask

DOCS = {"q1": "one two three", "q2": "one two three four five", "a": "x y", "b": "x y z w", "c": "v"}
QUERIES = [RankingQuery("q1", ["a", "b"], 0), RankingQuery("q2", ["b", "c"], 1)]


def test_statistics_of_a_fixture_task():
    stats = task_statistics(RankingTask(DOCS, QUERIES))
    # queries: (3 + 5) / 2; distinct candidates a, b, c: (2 + 4 + 1) / 3 (b counted once)
    assert stats == {"n_queries": 2, "mean_query_tokens": 4.0, "mean_document_tokens": pytest.approx(7 / 3),
                     "n_documents": 3}
    with pytest.raises(ValueError, match="without queries"):
        task_statistics(RankingTask(DOCS, []))


def test_table_puts_the_paper_beside_ours(tmp_path):
    unknown = {"pi": {"tokenizer": "minilm", "share": 0.0, "max_share": 0.01},
               "rr": {"tokenizer": "minilm", "share": 0.0571, "max_share": 0.01}}
    df = assemble_table1({"pi": ("released", RankingTask(DOCS, QUERIES)),
                          "rr": ("wikitext2", RankingTask(DOCS, QUERIES[:1]))}, unknown)
    assert list(df.columns) == TABLE1_COLUMNS
    assert df["task"].tolist() == ["PI", "RR"] and df.loc[1, "corpus"] == "WikiText-2 valid+test"
    assert df.loc[1, "n_queries"] == 1 and df.loc[1, "mean_document_tokens"] == 3.0
    assert (df.loc[0, "paper_n_queries"], df.loc[0, "paper_mean_query_tokens"],
            df.loc[0, "paper_mean_document_tokens"]) == (1024, 241.3, 242.1)
    assert (df.loc[1, "paper_corpus"], df.loc[1, "paper_mean_query_tokens"],
            df.loc[1, "paper_mean_document_tokens"]) == ("WikiText-103", 287.0, 333.8)
    write_table1(df, tmp_path / "t1.csv", tmp_path / "t1.md")
    back = pd.read_csv(tmp_path / "t1.csv")
    assert list(back.columns) == TABLE1_COLUMNS and back.loc[0, "mean_query_tokens"] == 4.0
    md = (tmp_path / "t1.md").read_text()
    assert ("| PI | ParaBank (the paper's released dev set) | 2 | 4.0 | 2.3 | 3 | 0.00% | minilm | no | ParaBank | 1024 "
            "| 241.3 | 242.1 |") in md
    assert "| 5.71% | minilm | yes |" in md  # RR above data.max_unknown_share
    assert df["unknown_over_threshold"].tolist() == [False, True]
    with pytest.raises(ValueError, match=r"rr/meta.json: no 'unknown_tokens' block"):
        unknown_tokens_of({"counts": {}}, "rr/meta.json")
    with pytest.raises(ValueError, match="columns"):
        write_table1(df.drop(columns=["n_queries"]), tmp_path / "x.csv", tmp_path / "x.md")


def test_released_pi_dev_set_gives_the_papers_statistics(mirror):
    """The paper's own PI dev set: our counting reproduces its Table 1 row."""
    stats = task_statistics(RankingTask.load(mirror / "nugget-data" / "paraphrase_identification" / "dev"))
    paper = PAPER_TABLE1["PI"]
    assert stats["n_queries"] == paper["n_queries"]
    assert round(stats["mean_query_tokens"], 1) == paper["mean_query_tokens"]
    assert round(stats["mean_document_tokens"], 1) == paper["mean_document_tokens"]
