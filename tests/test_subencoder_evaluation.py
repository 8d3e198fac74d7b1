"""Atomic-fact retrieval metrics (Chen et al. 2023 §4.2.1, §5.2) on hand-made rankings, and the
PropSegment dev retrieval set built from the data mirror."""

import os
from pathlib import Path

import pytest
import torch

from multivec.subencoder.evaluation.unit_ranking import rank_units, retrieval_metrics


def test_rank_units_max_pools_and_excludes_the_query():
    scores = torch.tensor([0.9, 0.1, 0.8, 0.7, 0.2])
    assert rank_units(scores, range(5), 5, exclude=0, top=3) == [2, 3, 4]
    # units: candidates {0, 1} -> unit 0, {2} -> unit 1, {3, 4} -> unit 2; unit score = max
    assert rank_units(scores, [0, 0, 1, 2, 2], 3, exclude=None, top=3) == [0, 1, 2]
    assert rank_units(scores, [0, 0, 1, 2, 2], 3, exclude=[0, 1], top=3) == [1, 2]  # unit 0 gone entirely


def test_retrieval_metrics_by_cosine():
    candidates = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7], [-1.0, 0.0]])
    queries = torch.tensor([[2.0, 0.1], [0.1, 1.0]])  # q0 nearest 0 then 2; q1 nearest 1 then 2
    got = retrieval_metrics(queries, candidates, [{2}, {1, 3}], [0, None], ks=(1, 2))
    # q0: itself (0) removed -> ranking [2, 1, 3]: P@1 1, R@1 1; q1: ranking [1, 2, 0, 3]: P@1 1, R@2 1/2
    assert got == pytest.approx({"p@1": 100.0, "r@1": 75.0, "r@2": 75.0})
    with pytest.raises(ValueError, match="2 queries but 1 gold"):
        retrieval_metrics(queries, candidates, [{1}], [None, None])


MIRROR = Path(os.environ.get("MULTIVEC_DATA_MIRROR", "../shared/data")) / "propsegment" / "v1"


@pytest.mark.skipif(not (MIRROR / "relationships.dev.json").exists(), reason="PropSegment is not in the mirror")
def test_propsegment_dev_retrieval_set():
    from multivec.subencoder.evaluation.retrieval_set import build_retrieval_set

    rs = build_retrieval_set(MIRROR)
    assert rs.counts["documents"] == 45 and rs.counts["sentences"] == 387
    assert 340 <= len(rs.queries) <= 349 and 1550 <= len(rs.candidates) <= 1650
    for query, gold, own in zip(rs.queries, rs.gold, rs.query_index):
        assert gold and all(rs.candidates[g].document_id != query.document_id for g in gold)
        assert own is None or rs.candidates[own] == query
        text = rs.sentences[query.sentence_key]
        assert all(0 <= a < b <= len(text) for a, b in rs.char_spans(query))
    with pytest.raises(ValueError, match="not public"):
        build_retrieval_set(MIRROR, "test")


def test_predicted_queries_keep_only_jaccard_matches():
    from multivec.subencoder.evaluation.retrieval import predicted_queries
    from multivec.subencoder.evaluation.retrieval_set import Proposition, RetrievalSet

    text = "Ada wrote programs and Ada studied maths ."
    words = text.split()
    starts = [text.index(w, sum(len(x) + 1 for x in words[:i])) for i, w in enumerate(words)]
    key = ("d1", 0)
    q_good, q_bad = Proposition("d1", 0, (0, 1, 2)), Proposition("d1", 0, (4, 5, 6))
    rs = RetrievalSet(sentences={key: text}, token_spans={key: [(s, s + len(w)) for s, w in zip(starts, words)]},
                      candidates=[q_good, q_bad], queries=[q_good, q_bad], gold=[{1}, {0}], query_index=[0, 1])

    def segment(sentences):
        assert sentences == [text]
        return [["Ada wrote programs", "Ada studied"]]

    def align(sentence, proposition):  # a stand-in aligner: first occurrence after the last match
        spans, position = [], 0 if proposition.startswith("Ada wrote") else 23
        for word in proposition.split():
            start = sentence.index(word, position)
            spans.append([start, start + len(word)])
            position = start + len(word)
        return spans

    chosen, rows = predicted_queries(rs, segment, align, threshold=0.8)
    # "Ada wrote programs" = tokens {0,1,2}: Jaccard 1 with q_good; "Ada studied" = {4,5}: 2/3 with q_bad
    assert rows == [0] and chosen == [Proposition("d1", 0, (0, 1, 2))]
    chosen, rows = predicted_queries(rs, segment, align, threshold=0.5)
    assert rows == [0, 1] and chosen[1].token_indices == (4, 5)


FIXTURES = Path(__file__).parent / "fixtures"


def test_csts_pipeline_on_a_small_fixture():
    from scipy.stats import spearmanr

    from multivec.subencoder.evaluation.csts import csts_predictions, read_csts, spearman_x100, word_spans
    from multivec.subencoder.configuration import SubEncoderConfig
    from multivec.subencoder.model import SubEncoder

    # left to right: the second "red" is the second occurrence; a word absent from the sentence is skipped
    assert word_spans("A red shirt and a red coat.", "red, red, coat, purple") == [[2, 5], [18, 21], [22, 26]]
    rows = read_csts(FIXTURES / "csts_small.jsonl")
    replies = {"The color of the clothing.": "red", "The activity.": "rides a bike, walks", "The sport.": "football",
               "The number of people.": "Two children"}
    prompts = []

    def complete(prompt):  # a fake LLM: the condition decides the words
        prompts.append(prompt)
        return next(v for k, v in replies.items() if f"Condition: {k}" in prompt)

    model = SubEncoder.from_backbone(SubEncoderConfig(encoder="tiny-random-bert", head="none"))
    predictions, counts = csts_predictions(model, rows, complete)
    assert len(predictions) == 4 and all(-1.0 <= p <= 1.0 for p in predictions)
    assert counts["llm_calls"] == 8 == len(prompts)
    assert counts["fallback_whole_sentence"] == 2  # "football" and "Two children" are absent from their side 2
    labels = [r["label"] for r in rows]
    assert spearman_x100(predictions, labels) == pytest.approx(100 * spearmanr(predictions, labels).statistic)
    with pytest.raises(ValueError, match="Spearman"):
        spearman_x100([0.1], [1])


def test_malformed_propsegment_files_name_the_file_and_key(tmp_path):
    import json

    from multivec.io import MalformedInputError
    from multivec.subencoder.evaluation.retrieval_set import build_retrieval_set

    cluster = {"cluster_id": "1", "source_dataset": "SOURCE_WIKI_CLUSTERS",
               "documents": [{"document_id": "7", "sentences": [{"sentence_text": "Ada wrote.", "tokens": [
                   {"text": "Ada", "character_offset_of_token_in_sentence": 0},
                   {"text": "wrote", "character_offset_of_token_in_sentence": 4}]}]}]}
    (tmp_path / "document_clusters.dev.json").write_text(json.dumps([cluster]))
    (tmp_path / "document_cluster_retrieval_instructions.dev.json").write_text("[]")
    (tmp_path / "propositions.dev.json").write_text(json.dumps([{"sentence_id": {"cluster_id": "1", "document_id": "7",
                                                                                 "sentence_index": 0}}]))
    with pytest.raises(MalformedInputError, match=r"propositions.dev.json: sentence \('7', 0\): key "
                                                  r"'segmentation_responses' missing"):
        build_retrieval_set(tmp_path)
    cluster["documents"][0]["sentences"][0]["tokens"][1]["character_offset_of_token_in_sentence"] = 3
    (tmp_path / "document_clusters.dev.json").write_text(json.dumps([cluster]))
    with pytest.raises(MalformedInputError, match="document_clusters.dev.json: document 7 sentence 0: token 'wrote'"):
        build_retrieval_set(tmp_path)


def test_tables_put_the_papers_numbers_beside_ours(tmp_path):
    from multivec.subencoder.tables.paper_tables import index_size_line, table1, table5, write_table

    def result(p1, r5, dim):
        return {"proposition": {"p@1": p1, "r@5": r5, "r@10": 60.0, "r@20": 70.0}, "dim": dim, "queries": 3,
                "candidates": 9, "index": {"bytes_per_vector_fp32": 4 * dim}}

    df = table1([{"row": "base", "kind": "base", "strategy": "mask_pooling", "paper_row": "MiniLM-L6-v2",
                  "result": result(14.613, 48.3, 384)},
                 {"row": "ours", "kind": "subencoder", "strategy": "mask_pooling", "paper_row": None,
                  "result": result(30.0, 60.0, 384)}])
    assert df.loc[0, "P@1"] == 14.61 and df.loc[0, "paper_P@1"] == 18.36 and df.loc[0, "paper_R@20"] == 51.62
    assert df["paper_P@1"].isna().tolist() == [False, True]
    t5 = table5([{"row": "full", "result": result(40.0, 70.0, 768), "paper_row": "SUBENCODER (ST5-Base)",
                  "paper_dim": 768},
                 {"row": "64", "result": result(39.0, 71.0, 64), "paper_row": "SUBENCODER (ST5-Base)",
                  "paper_dim": 64}])
    assert t5["delta_P@1"].tolist() == [0.0, -1.0] and t5["paper_P@1"].tolist() == [40.97, 40.45]
    assert t5["bytes_per_vector"].tolist() == [3072, 256]
    with pytest.raises(KeyError, match="not in the paper's table"):
        table1([{"row": "x", "kind": "base", "strategy": "s", "paper_row": "GPT-5", "result": result(1, 1, 8)}])
    line = index_size_line(4.2, 384, 64)
    write_table(df, tmp_path / "t1.csv", tmp_path / "t1.md", "Table 1", [line])
    text = (tmp_path / "t1.md").read_text()
    assert "| base | authors | base | mask_pooling | 384 | 14.61 |" in text and "1536 bytes" in text and "256 bytes at 64" in text
