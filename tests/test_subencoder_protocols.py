"""The protocol defects of the sub-sentence encoder's retrieval tables: Table 1 under the authors'
and the own-sentence-excluded protocols, the lexical baseline, Table 8 removing the same candidates for
gold and predicted queries, notes from data and configuration, the paper's baseline rows at paper scale;
and the PropSegment reader checks (a bad record is named, never dropped silently)."""

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from multivec.io import MalformedInputError
from multivec.subencoder.evaluation import retrieval
from multivec.subencoder.evaluation.retrieval import (
    PROTOCOLS,
    evaluate,
    evaluate_lexical,
    evaluate_scores,
    removed_candidates,
    word_jaccard_scores,
)
from multivec.subencoder.evaluation.retrieval_set import Proposition, RetrievalSet, build_retrieval_set
from multivec.subencoder.tables.units import Layout, table_rows
from multivec.subencoder.tables.paper_tables import retrieval_notes, retrieval_table_frame

REPO = Path(__file__).resolve().parents[1]


def _sentence(text):
    words, spans, position = text.split(), [], 0
    for word in words:
        start = text.index(word, position)
        spans.append((start, start + len(word)))
        position = start + len(word)
    return spans


def small_set() -> RetrievalSet:
    """Two documents of one cluster. Query q (doc a, sentence 0, tokens 0-2) has a sibling candidate in its
    own sentence (tokens 4-6), another candidate in its document (a, 1), and gold in document b."""
    texts = {("a", 0): "Ada wrote programs and Ada studied maths .", ("a", 1): "Ada lived in London .",
             ("b", 0): "Lovelace wrote programs for engines .", ("b", 1): "Lovelace studied maths ."}
    q, sibling = Proposition("a", 0, (0, 1, 2)), Proposition("a", 0, (4, 5, 6))
    other = Proposition("a", 1, (0, 1, 2, 3))
    gold, distractor = Proposition("b", 0, (0, 1, 2)), Proposition("b", 1, (0, 1, 2))
    candidates = [q, sibling, other, gold, distractor]
    return RetrievalSet(sentences=texts, token_spans={k: _sentence(t) for k, t in texts.items()},
                        candidates=candidates, queries=[q], gold=[{3}], query_index=[0],
                        cluster_of={"a": "c", "b": "c"})


def test_each_protocol_removes_the_query_its_sentence_or_its_document():
    rs = small_set()
    assert removed_candidates(rs, [0], "authors") == [[0]]
    assert removed_candidates(rs, [0], "own_sentence_excluded") == [[0, 1]]
    assert removed_candidates(rs, [0], "own_document_excluded") == [[0, 1, 2]]
    with pytest.raises(ValueError, match="unknown evaluation protocol 'none'"):
        removed_candidates(rs, [0], "none")
    # the sibling scores highest (shared context under mask pooling), then the own document, then gold
    scores = torch.tensor([[1.0, 0.95, 0.9, 0.8, 0.1]])
    result = evaluate_scores(rs, scores, [0])
    p1 = {p: result["protocols"][p]["p@1"] for p in PROTOCOLS}
    assert p1 == {"authors": 0.0, "own_sentence_excluded": 0.0, "own_document_excluded": 100.0}
    assert result["top1"]["authors"] == {"top1_own_sentence_pct": 100.0, "top1_own_document_pct": 100.0}
    assert result["top1"]["own_sentence_excluded"] == {"top1_own_sentence_pct": 0.0, "top1_own_document_pct": 100.0}
    assert result["removed_per_query"] == {"authors": 1.0, "own_sentence_excluded": 2.0, "own_document_excluded": 3.0}
    assert result["proposition"] == result["protocols"]["authors"]  # Tables 5 and 8 read the authors' protocol
    assert result["per_query"]["protocols"]["own_document_excluded"]["p@1"] == [100.0]
    assert (result["candidate_documents"], result["candidate_sentences"]) == (2, 4)
    with pytest.raises(ValueError, match=r"score matrix \(1, 4\) for 1 queries and 5 candidates"):
        evaluate_scores(rs, scores[:, :4], [0])


def test_lexical_baseline_ranks_by_word_jaccard_without_punctuation():
    rs = small_set()
    scores = word_jaccard_scores(rs, rs.queries)
    # q = {ada, wrote, programs}; gold (b, 0) = {lovelace, wrote, programs}: 2 shared of 4; the final "." is no word
    assert scores[0, 3].item() == pytest.approx(2 / 4) and scores[0, 0].item() == pytest.approx(1.0)
    assert scores[0, 4].item() == 0.0
    result = evaluate_lexical(rs)
    assert result["dim"] is None and result["protocols"]["authors"]["p@1"] == 100.0


class RecordingRankings:
    """Wraps ``retrieval.score_rankings`` and records the candidates each call removes."""

    wrapped = staticmethod(retrieval.score_rankings)

    def __init__(self):
        self.calls = []

    def __call__(self, scores, query_index, *args, **kwargs):
        self.calls.append([sorted(r or []) for r in query_index])
        return self.wrapped(scores, query_index, *args, **kwargs)


def test_table8_removes_the_same_candidates_for_gold_and_predicted_queries(monkeypatch):
    """A predicted query that is another candidate (here the gold query's sibling) or no candidate at all
    must not change what leaves the ranking: exactly the gold query's candidates, in both runs."""
    from multivec.subencoder.configuration import SubEncoderConfig
    from multivec.subencoder.model import SubEncoder

    rs = small_set()
    model = SubEncoder.from_backbone(SubEncoderConfig(encoder="tiny-random-bert", head="none"))
    runs = {}
    for name, query in (("gold", None), ("sibling", Proposition("a", 0, (4, 5, 6))),
                        ("not a candidate", Proposition("a", 0, (0, 1, 2, 3)))):
        recorder = RecordingRankings()
        monkeypatch.setattr(retrieval, "score_rankings", recorder)
        result = evaluate(model, rs, queries=None if query is None else [query], query_rows=[0])
        runs[name] = (recorder.calls, result["per_query"]["removed"], result["removed_per_query"])
    assert runs["gold"][0] == [[[0]], [[0, 1]], [[0, 1, 2]]]  # one call per protocol
    assert runs["gold"][1] == [0]
    assert runs["sibling"] == runs["gold"] and runs["not a candidate"] == runs["gold"]
    with pytest.raises(ValueError, match="stands in for query row 0 of another sentence"):
        evaluate(model, rs, queries=[Proposition("a", 1, (0,))], query_rows=[0])


def _result(p1):
    per_protocol = {p: {"p@1": p1 + i, "r@5": 50.0, "r@10": 60.0, "r@20": 70.0} for i, p in enumerate(PROTOCOLS)}
    return {"protocols": per_protocol, "proposition": per_protocol["authors"], "dim": 8, "queries": 3,
            "candidates": 9, "top1": {p: {"top1_own_sentence_pct": 0.0 if i else 60.0} for i, p in enumerate(PROTOCOLS)}}


def demo_subencoder(**evaluation_settings):
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())["subencoder"]
    config["evaluation"].update(evaluation_settings)
    return config


def test_table1_has_both_protocols_the_lexical_row_and_paper_numbers_only_where_the_paper_measured():
    subencoder = demo_subencoder(protocols=["authors", "own_sentence_excluded"], lexical_baseline=True,
                                 baseline_encoders=[{"name": "distilroberta", "encoder": "x", "paper_row": "DistilRoberta",
                                                     "encodings": ["full_mask"], "paper_encoding": "full_mask"}])
    frame = retrieval_table_frame("table1", subencoder, 13, read=lambda path: _result(10.0))
    rows = frame.set_index("row")
    assert frame["protocol"].tolist() == ["authors"] * 6 + ["own_sentence_excluded"] * 6
    assert rows.loc["SubEncoder (minilm) [own_sentence_excluded]", "P@1"] == 11.0  # that protocol's scores
    assert rows.loc["minilm (untrained, mask_pooling) [authors]", "top1_own_sentence_pct"] == 60.0
    assert rows.loc["word Jaccard (lexical baseline) [authors]", "kind"] == "lexical"
    paper = rows["paper_P@1"].dropna()  # App. C.1: the compact models' reported encoding is the full mask
    assert paper.to_dict() == {"distilroberta (untrained, full_mask) [authors]": 16.59,
                               "minilm (untrained, full_mask) [authors]": 18.36}


def test_notes_come_from_the_data_and_the_configuration():
    evaluation_json = {"queries": 349, "candidates": 1607, "candidate_sentences": 387, "candidate_documents": 45,
                       "dim": 384, "index": {"vectors_per_sentence": 4.15},
                       "removed_per_query": {"authors": 0.92, "own_sentence_excluded": 4.6,
                                             "own_document_excluded": 36.0}}
    demo = demo_subencoder()
    demo["train"]["max_steps"], demo["segmenter"]["kind"] = 100, "clause"  # set here: the notes must follow them
    notes = "\n".join(retrieval_notes("table1", evaluation_json, demo, "demo", [13, 14, 15]))
    assert "1607 candidate propositions from 387 sentences of 45 documents" in notes
    assert "Protocol own_sentence_excluded" in notes and "4.60 candidates removed per query" in notes
    assert "train 100 steps" in notes and "the clause segmenter" in notes
    changed = copy.deepcopy(evaluation_json)
    changed.update(candidates=4017, candidate_documents=117)
    config = demo_subencoder(protocols=["authors"], lexical_baseline=False, match_jaccard=0.7)
    config["train"]["max_steps"] = 300
    config["segmenter"]["kind"] = "llm"
    notes = "\n".join(retrieval_notes("table1", changed, config, "paper", [13]))
    assert "4017 candidate propositions from 387 sentences of 117 documents" in notes and "45 documents" not in notes
    assert "Protocol own_sentence_excluded" not in notes and "word Jaccard" not in notes
    assert "train 300 steps" in notes and "the llm segmenter" in notes
    table8 = "\n".join(retrieval_notes("table8", changed, config, "paper", [13]))
    assert "Jaccard > 0.7" in table8 and "0.8" not in table8
    script = (REPO / "workflow/scripts/subencoder_eval_tables.py").read_text()
    assert "45 Wikipedia" not in script and "0.8" not in script


def test_paper_scale_lists_the_papers_baseline_rows():
    """config/paper.yaml: the paper's Table 1 baselines (MiniLM, DistilRoberta, SimCSE unsupervised and
    supervised, GTR, ST5) are rows of Table 1 with the paper's numbers, and their evaluations are in the
    paper-scale DAG (dry run)."""
    base = yaml.safe_load((REPO / "config/config.yaml").read_text())["subencoder"]
    paper = yaml.safe_load((REPO / "config/paper.yaml").read_text())["subencoder"]
    subencoder = {**base, "model": {**base["model"], **paper["model"]},
                  "evaluation": {**base["evaluation"], **paper["evaluation"]}}
    frame = retrieval_table_frame("table1", subencoder, 13, read=lambda path: _result(10.0))
    shown = set(frame["paper_row"]) - {""}
    assert shown == {"MiniLM-L6-v2", "DistilRoberta", "SimCSE (unsupervised)", "SimCSE (supervised)", "GTR base",
                     "ST5 base", "SUBENCODER (SimCSE)", "SUBENCODER (ST5 base)", "SUBENCODER (GTR base)"}
    assert set(frame.loc[frame["paper_row"] != "", "protocol"]) == {"authors"}
    mirror = os.environ.get("MULTIVEC_DATA_MIRROR", "/nonexistent")
    if not Path(mirror).is_dir():
        pytest.skip("MULTIVEC_DATA_MIRROR is not set")
    env = {**os.environ, "MULTIVEC_DATA_MIRROR": mirror, "HF_HUB_OFFLINE": "1"}
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "-s", str(REPO / "Snakefile"),
                             "--configfile", "config/paper.yaml", "--directory", str(REPO / ".pytest_cache/paper_dag"),
                             "--", "results/subencoder_table1.csv"], cwd=REPO, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    sources = table_rows("table1", Layout.from_config(subencoder))
    for source in sources:
        if source.evaluation in ("base", "lexical"):
            from multivec.subencoder.tables.units import evaluation_path

            assert evaluation_path(source, None) in result.stdout, source.row
    assert {s.backbone for s in sources} >= {"minilm", "distilroberta", "simcse_unsup", "simcse", "gtr_base",
                                              "st5_base"}


# ---- PropSegment readers: a bad record is named, never dropped or scored as 0

def _write_propsegment(folder, *, clusters=None, propositions=None, relationships=None):
    tokens = [{"text": w, "character_offset_of_token_in_sentence": s} for w, s in
              (("Ada", 0), ("wrote", 4), ("code", 10), (".", 15))]
    wiki = clusters or [{"cluster_id": "1", "source_dataset": "SOURCE_WIKI_CLUSTERS", "documents": [
        {"document_id": "7", "sentences": [{"sentence_text": "Ada wrote code .", "tokens": tokens}]},
        {"document_id": "8", "sentences": [{"sentence_text": "Ada wrote code .", "tokens": copy.deepcopy(tokens)}]}]}]
    news = [{"cluster_id": "9", "source_dataset": "SOURCE_NEWSHEAD", "documents": []}]
    props = propositions or [
        {"sentence_id": {"cluster_id": c, "document_id": d, "sentence_index": 0},
         "segmentation_responses": [{"is_reference_response": True, "propositions": [{"token_indices": [0, 1, 2]}]}]}
        for c, d in (("1", "7"), ("1", "8"), ("9", "55"))]
    response = {"relationship": "RELATIONSHIP_ENTAILS",
                "supporting_premise_proposition": {"sentence_index": 0, "proposition": {"token_indices": [0, 1, 2]}}}
    rels = relationships or [
        {"cluster_id": "1", "premise_document_id": "8", "relationship_responses": [response],
         "hypothesis_proposition": {"document_id": "7", "sentence_index": 0, "proposition": {"token_indices": [0, 1, 2]}}},
        {"cluster_id": "9", "premise_document_id": "56", "relationship_responses": [response],
         "hypothesis_proposition": {"document_id": "55", "sentence_index": 0, "proposition": {"token_indices": [0]}}}]
    for name, rows in (("document_clusters", wiki), ("document_cluster_retrieval_instructions", news),
                       ("propositions", props), ("relationships", rels)):
        (folder / f"{name}.dev.json").write_text(json.dumps(rows))
    return wiki, props, rels


def test_a_well_formed_propsegment_folder_reads(tmp_path):
    _write_propsegment(tmp_path)
    rs = build_retrieval_set(tmp_path)
    assert len(rs.queries) == 1 and rs.counts["skipped_hypothesis_outside_wikipedia"] == 1  # the News record


@pytest.mark.parametrize("damage, message", [
    (lambda w, p, r: w[0]["documents"][0]["sentences"][0]["tokens"][1].pop("text"),
     r"document_clusters.dev.json: document 7 sentence 0 token 1: key 'text' missing"),
    (lambda w, p, r: w[0]["documents"][0]["sentences"][0]["tokens"][1].update(character_offset_of_token_in_sentence="4a"),
     r"document_clusters.dev.json: document 7 sentence 0 token 1: character_offset_of_token_in_sentence: '4a' is not"),
    (lambda w, p, r: p[0]["sentence_id"].pop("sentence_index"),
     r"propositions.dev.json: record 0: key 'sentence_index' missing"),
    (lambda w, p, r: p[1]["segmentation_responses"][0]["propositions"][0].update(token_indices=[0, "x"]),
     r"propositions.dev.json: record 1 \(document 8 sentence 0\): token index: 'x' is not"),
    (lambda w, p, r: p[1]["segmentation_responses"][0]["propositions"][0].update(token_indices=[0, 9]),
     r"propositions.dev.json: record 1 \(document 8 sentence 0\): token index 9 points past the sentence's 4 tokens"),
    (lambda w, p, r: p[2]["sentence_id"].update(cluster_id="404"),
     r"propositions.dev.json: record 2 \(document 55 sentence 0\): cluster 404 matches no cluster"),
    (lambda w, p, r: p[1]["sentence_id"].update(sentence_index=3),
     r"propositions.dev.json: record 1 \(document 8 sentence 3\): document 8 sentence 3 matches no sentence of "
     r"Wikipedia cluster 1"),
    (lambda w, p, r: r[0].update(cluster_id="404"),
     r"relationships.dev.json: record 0 \(hypothesis: document 7 sentence 0\): cluster 404 matches no cluster"),
    (lambda w, p, r: r[0]["hypothesis_proposition"].update(sentence_index=2),
     r"relationships.dev.json: record 0 \(hypothesis: document 7 sentence 2\): document 7 sentence 2 matches no"),
    (lambda w, p, r: r[0]["relationship_responses"][0]["supporting_premise_proposition"].update(sentence_index=5),
     r"relationships.dev.json: record 0 .*: supporting premise sentence 5 matches no sentence of document 8"),
    (lambda w, p, r: r[0].update(premise_document_id="77"),
     r"relationships.dev.json: record 0 .*: premise document 77 is not a document of cluster 1"),
    (lambda w, p, r: r.pop(0), r"relationships.dev.json: no hypothesis proposition .* no query"),
])
def test_damaged_propsegment_records_are_named(tmp_path, damage, message):
    wiki, props, rels = _write_propsegment(tmp_path)
    damage(wiki, props, rels)
    _write_propsegment(tmp_path, clusters=wiki, propositions=props, relationships=rels)
    with pytest.raises(MalformedInputError, match=message):
        build_retrieval_set(tmp_path)
