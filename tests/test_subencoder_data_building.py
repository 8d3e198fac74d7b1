"""Sentence pairs, segmentation, training rows and Table 7's metric (subencoder data modules)."""
import json

import pytest

from multivec.io import MalformedInputError
from multivec.subencoder.data.propsegment import attach_segmentations, read_clusters, tokens_in_spans
from multivec.subencoder.data.segmentation import ClauseSegmenter, claims_as_lines, claims_as_target, segment_and_align
from multivec.subencoder.evaluation.segmentation_quality import evaluate, matched_count, table7_scores
from multivec.subencoder.data.sentence_pairs import SentencePair, cluster_pairs, read_pair_file
from multivec.subencoder.tables.paper_tables import table7_rows
from multivec.subencoder.data.training_rows import SegmentedSentence, build_rows, split_dev, validate_row


def _tokens(text):
    import re
    return [{"text": m.group(), "character_offset_of_token_in_sentence": m.start()}
            for m in re.finditer(r"\w+|[^\w\s]", text)]


def write_propsegment(tmp_path):
    docs = {
        "d1": ["Jolie signed on in April 2016, and filming began in May.", "The film was a hit."],
        "d2": ["Filming began in May, after Jolie signed on in April 2016.", "Critics liked the hit film."],
    }
    clusters = [{"cluster_id": "c1", "source_dataset": "SOURCE_WIKI_CLUSTERS",
                 "documents": [{"document_id": d, "sentences": [{"sentence_text": s, "tokens": _tokens(s)}
                                                                for s in sents]} for d, sents in docs.items()]}]
    # tokens: Jolie signed on in April 2016 , and filming began in May .
    gold = [{"token_indices": [0, 1, 2, 3, 4, 5]}, {"token_indices": [8, 9, 10, 11]}]
    segs = [{"sentence_id": {"cluster_id": "c1", "document_id": "d1", "sentence_index": 0},
             "segmentation_responses": [{"non_informational": False, "propositions": [{"token_indices": [0]}],
                                         "is_reference_response": False},
                                        {"non_informational": False, "propositions": gold,
                                         "is_reference_response": True}]},
            {"sentence_id": {"cluster_id": "news", "document_id": "x", "sentence_index": 0},
             "segmentation_responses": [{"propositions": [{"token_indices": [0]}]}]}]
    (tmp_path / "clusters.json").write_text(json.dumps(clusters))
    (tmp_path / "props.json").write_text(json.dumps(segs))
    return tmp_path / "clusters.json", tmp_path / "props.json"


def test_propsegment_reader_uses_the_reference_response_and_skips_news(tmp_path):
    clusters_path, props_path = write_propsegment(tmp_path)
    clusters = read_clusters(clusters_path)
    counts = attach_segmentations(clusters, props_path)
    assert (counts.attached, counts.other_clusters) == (1, 1)
    sentence = clusters[0].documents["d1"][0]
    assert len(sentence.propositions) == 2 and sentence.propositions[0] == frozenset(range(6))
    assert sentence.text[slice(*sentence.token_spans[0])] == "Jolie"
    assert tokens_in_spans(sentence.token_spans, [[0, 12]]) == frozenset({0, 1})  # "Jolie", "signed"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"cluster_id": "c", "documents": [{"document_id": "d"}]}]))
    with pytest.raises(MalformedInputError, match="bad.json.*document d: key 'sentences' missing"):
        read_clusters(bad)


def test_cluster_pairs_are_cross_document_and_unique(tmp_path):
    clusters = read_clusters(write_propsegment(tmp_path)[0])
    pairs = cluster_pairs(clusters, per_sentence=1, min_shared=2)
    assert pairs, "the two 'Jolie signed ... filming began' sentences share content words"
    for p in pairs:
        assert p.a_id.split(":")[1] != p.b_id.split(":")[1]
    assert len({tuple(sorted((p.a_id, p.b_id))) for p in pairs}) == len(pairs)
    assert any("Jolie" in p.a and "Jolie" in p.b for p in pairs)
    assert not cluster_pairs(clusters, per_sentence=1, min_shared=50)


def test_pair_file_rows_are_checked(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"id": "1", "sentence_a": "A.", "sentence_b": "B."}\n{"id": "2", "sentence_a": "A."}\n')
    with pytest.raises(MalformedInputError, match="pairs.jsonl:2: 'sentence_b'"):
        read_pair_file(path)


def test_clause_segmenter_splits_at_clause_markers_and_keeps_substrings():
    s = "Rønning, who co-directed the film, was hired in 2017; filming began in May and it ended in July."
    claims = ClauseSegmenter().segment([s])[0]
    assert all(word in s for c in claims for word in c.split())
    assert "who co-directed the film" in claims and "filming began in May" in claims
    assert "Rønning was hired in 2017" in claims  # the main clause, joined around the relative one
    assert "it ended in July" in claims
    assert ClauseSegmenter().segment(["."])[0] is None


def test_segment_and_align_counts_malformed_and_unaligned():
    class Fake:
        name, stand_in = "fake", False

        def segment(self, sentences):
            return [["A cat sat", "zebras fly"], None][:len(sentences)]

    rows, counts = segment_and_align({"s1": "A cat sat on a mat.", "s2": "Nothing."}, Fake())
    assert rows[0]["propositions"] == [{"text": "A cat sat", "char_spans": [[0, 1], [2, 5], [6, 9]]}]
    assert rows[1]["propositions"] == []
    assert (counts.malformed_or_empty, counts.propositions_unaligned, counts.propositions) == (1, 1, 1)


def test_claims_target_round_trip():
    claims = ["A is B.", "B is in 2016."]
    assert claims_as_lines(claims_as_target(claims)) == "1. A is B.\n2. B is in 2016."


class ScriptedJudge:
    name, stand_in = "scripted", True

    def __init__(self, positives):
        self.positives, self.asked = set(positives), []

    def positive(self, pairs):
        self.asked += pairs
        return [p in self.positives for p in pairs]


def _seg(sid, *texts):
    return SegmentedSentence(sid, " ".join(texts), [{"text": t, "char_spans": [[0, 1]]} for t in texts])


def test_training_rows_labels_positives_transitively_and_uniquely():
    pairs = [SentencePair("p1", "a", "x", "b", "y"), SentencePair("p2", "c", "x", "d", "y"),
             SentencePair("p3", "a", "x", "e", "y")]
    segments = {"a": _seg("a", "A1", "A2"), "b": _seg("b", "B1", "B2", "B3"), "c": _seg("c", "C1"),
                "d": _seg("d", "D1"), "e": _seg("e")}
    judge = ScriptedJudge({("A1", "B1"), ("A1", "B3"), ("C1", "D1")})
    rows, counts = build_rows(pairs, segments, judge, linking="transitive")
    assert counts.pairs_kept == 2 and counts.pairs_missing_segments == 1 and counts.pairs_without_positive == 0
    assert len(judge.asked) == 2 * 3 + 1
    by_id = {r["id"]: r for r in rows}
    a, b = by_id["p1:a"]["propositions"], by_id["p1:b"]["propositions"]
    assert a[0]["label"] == b[0]["label"] == b[2]["label"]  # A1 = B1 = B3 (transitive)
    assert len({a[1]["label"], b[1]["label"], a[0]["label"]}) == 3
    c, d = by_id["p2:a"]["propositions"], by_id["p2:b"]["propositions"]
    assert c[0]["label"] == d[0]["label"] and c[0]["label"] not in {p["label"] for p in a + b}
    assert counts.labels == 4 and all(validate_row(r) is None for r in rows)
    assert counts.sibling_labels == 1 and counts.linked_proposition_pairs == 3  # B1, B3 share A1's label
    rows, counts = build_rows(pairs[:1], segments, ScriptedJudge(set()))
    assert rows == [] and counts.pairs_without_positive == 1


def test_one_to_one_linking_never_gives_two_propositions_of_a_sentence_one_label():
    """A lenient judge passes "Kim is an actor" against both of the other sentence's facts. Closed
    transitively, the two facts of each sentence would share a label, i.e. be trained as positives of each
    other; the default matching keeps the most links, each fact with its most similar partner."""
    pairs = [SentencePair("p1", "a", "x", "b", "y")]
    segments = {"a": _seg("a", "Kim is an actor", "Kim is a producer"),
                "b": _seg("b", "Kim Lee is producer", "Kim Lee is actor", "Kim Lee was born in 1970")}
    everything = {(x, y) for x in ("Kim is an actor", "Kim is a producer")
                  for y in ("Kim Lee is producer", "Kim Lee is actor")}
    rows, counts = build_rows(pairs, segments, ScriptedJudge(everything))
    a, b = rows[0]["propositions"], rows[1]["propositions"]
    assert a[0]["label"] == b[1]["label"] and a[1]["label"] == b[0]["label"]  # actor-actor, producer-producer
    assert len({p["label"] for p in a}) == 2 and len({p["label"] for p in b}) == 3
    assert (counts.linked_proposition_pairs, counts.positive_proposition_pairs, counts.sibling_labels) == (2, 4, 0)
    _, transitive = build_rows(pairs, segments, ScriptedJudge(everything), linking="transitive")
    assert transitive.sibling_labels == 2 and transitive.linked_proposition_pairs == 4
    with pytest.raises(ValueError, match="linking"):
        build_rows(pairs, segments, ScriptedJudge(everything), linking="closure")


def test_dev_split_keeps_pairs_together_and_is_seeded():
    rows = [{"pair_id": f"p{i}", "id": f"p{i}:{s}"} for i in range(200) for s in "ab"]
    train, dev = split_dev(rows, 0.2, seed=1)
    assert 20 < len(dev) / 2 < 60 and len(train) + len(dev) == len(rows)
    assert {r["pair_id"] for r in train}.isdisjoint({r["pair_id"] for r in dev})
    assert split_dev(rows, 0.2, seed=1) == (train, dev) and split_dev(rows, 0.2, seed=2) != (train, dev)
    with pytest.raises(ValueError, match="dev_fraction"):
        split_dev(rows, 1.0, seed=1)


def test_validate_row_names_the_problem():
    row = {"id": "x", "sentence": "abc", "pair_id": "p", "propositions": [{"text": "a", "char_spans": [[0, 9]],
                                                                           "label": 0}]}
    assert "inside the sentence" in validate_row(row)
    row["propositions"][0].update(char_spans=[[0, 1]], label=True)
    assert "'label' must be an int" in validate_row(row)


def test_jaccard_matching_on_hand_made_segmentations():
    gold = [frozenset({0, 1, 2, 3}), frozenset({4, 5, 6, 7, 8})]
    predicted = [frozenset({0, 1, 2, 3, 4}), frozenset({5, 6}), frozenset({9})]
    # J = 4/5 = 0.8 for the first; {5,6} vs gold[1] = 2/5 = 0.4
    assert matched_count(predicted, gold, 0.8) == 1
    assert matched_count(predicted, gold, 0.4) == 2
    # one-to-one: two predictions close to the same gold count once
    assert matched_count([frozenset({0, 1, 2, 3}), frozenset({0, 1, 2, 3})], gold, 0.5) == 1
    scores = evaluate([predicted, []], [gold, [frozenset({1})]], thetas=(0.8,))
    prf = scores[0.8]
    assert (prf.predicted, prf.gold) == (3, 3)
    assert prf.precision == pytest.approx(100 / 3) and prf.recall == pytest.approx(100 / 3)
    assert prf.f1 == pytest.approx(100 / 3)


def test_table7_rows_score_a_segmenter_and_keep_the_paper_reference_rows(tmp_path):
    clusters_path, props_path = write_propsegment(tmp_path)
    clusters = read_clusters(clusters_path)
    attach_segmentations(clusters, props_path)
    sentences = [s for c in clusters for d in c.documents.values() for s in d if s.propositions]

    class Oracle:
        name, stand_in = "oracle", True

        def segment(self, texts):
            return [["Jolie signed on in April 2016"]]

    scores = table7_scores({"test": sentences}, {"clause": Oracle()})
    assert scores[0]["sentences"] == [{"id": "c1:d1:0", "predicted": 1, "gold": 2, "matched_0.8": 1,
                                       "matched_0.5": 1}]
    rows = table7_rows(scores)
    ours = rows[0]
    assert ours["row"] == "clause segmenter, test" and ours["system"] == "oracle"
    assert ours["p_0.8"] == 100.0 and ours["r_0.8"] == 50.0 and ours["stand_in"] is True
    assert ours["paper_p_0.8"] is None  # a stand-in is never given the paper's numbers
    paper = [r for r in rows if r["kind"] == "paper"]
    assert [r["paper_f1_0.8"] for r in paper] == [33.60, 33.68, 34.17, 55.50]
