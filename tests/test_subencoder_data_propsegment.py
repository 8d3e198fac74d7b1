"""PropSegment readers (subencoder/data/propsegment.py) stay loud on bad input: a missing key or a
malformed offset names the file and the record; propositions whose ids match no sentence stop or are
counted; Table 7 is never scored on nothing."""
import copy
import json

import pytest

from multivec.io import MalformedInputError
from multivec.subencoder.data.propsegment import attach_segmentations, read_clusters
from multivec.subencoder.evaluation.segmentation_quality import table7_scores, table7_warnings

TEXT = "Jolie signed on in April 2016."
TOKENS = [{"text": t, "character_offset_of_token_in_sentence": TEXT.index(t)}
          for t in ["Jolie", "signed", "on", "in", "April", "2016", "."]]
CLUSTERS = [{"cluster_id": "c1", "source_dataset": "SOURCE_WIKI_CLUSTERS",
             "documents": [{"document_id": "d1", "sentences": [{"sentence_text": TEXT, "tokens": TOKENS}]}]}]
SEGMENTATIONS = [{"sentence_id": {"cluster_id": "c1", "document_id": "d1", "sentence_index": 0},
                  "segmentation_responses": [{"non_informational": False, "is_reference_response": True,
                                              "propositions": [{"token_indices": [0, 1, 2]}]}]},
                 {"sentence_id": {"cluster_id": "news", "document_id": "n1", "sentence_index": 0},
                  "segmentation_responses": [{"propositions": [{"token_indices": [0]}]}]}]


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_good_files_read_and_news_records_are_counted(tmp_path):
    clusters = read_clusters(write(tmp_path, "clusters.json", CLUSTERS))
    counts = attach_segmentations(clusters, write(tmp_path, "props.json", SEGMENTATIONS))
    assert (counts.records, counts.attached, counts.other_clusters) == (2, 1, 1)
    assert clusters[0].documents["d1"][0].propositions == [frozenset({0, 1, 2})]


@pytest.mark.parametrize("damage, message", [
    (lambda c: c[0].pop("cluster_id"), r"cluster #0: key 'cluster_id' missing"),
    (lambda c: c[0]["documents"][0]["sentences"][0].pop("tokens"), r"document d1 sentence 0: key 'tokens' missing"),
    (lambda c: c[0]["documents"][0]["sentences"][0]["tokens"][1].pop("character_offset_of_token_in_sentence"),
     r"document d1 sentence 0 token 1: key 'character_offset_of_token_in_sentence' missing"),
    (lambda c: c[0]["documents"][0]["sentences"][0]["tokens"][1].update(character_offset_of_token_in_sentence="6x"),
     r"document d1 sentence 0 token 1: 'character_offset_of_token_in_sentence' must be int, got '6x'"),
    (lambda c: c[0]["documents"][0]["sentences"][0]["tokens"][1].update(character_offset_of_token_in_sentence=7),
     r"document d1 sentence 0 token 1: offset 7 does not point at its text 'signed'"),
    (lambda c: c[0]["documents"][0]["sentences"][0]["tokens"][1].update(character_offset_of_token_in_sentence=-1),
     r"document d1 sentence 0 token 1: offset -1"),
    (lambda c: c[0]["documents"][0].update(sentences={"a": 1}), r"document d1: 'sentences' must be list"),
])
def test_a_damaged_clusters_file_names_the_file_and_the_record(tmp_path, damage, message):
    data = copy.deepcopy(CLUSTERS)
    damage(data)
    with pytest.raises(MalformedInputError, match=r"clusters\.json: " + message):
        read_clusters(write(tmp_path, "clusters.json", data))


@pytest.mark.parametrize("damage, message", [
    (lambda s: s[0]["sentence_id"].pop("document_id"), r"segmentation #0 sentence_id: key 'document_id' missing"),
    (lambda s: s[0]["sentence_id"].update(sentence_index="zero"),
     r"segmentation #0 sentence_index: expected a non-negative integer index, got 'zero'"),
    (lambda s: s[0].pop("segmentation_responses"),
     r"segmentation #0 \(sentence c1:d1:0\): key 'segmentation_responses' missing"),
    (lambda s: s[0]["segmentation_responses"][0]["propositions"][0].pop("token_indices"),
     r"segmentation #0 \(sentence c1:d1:0\) proposition #0: 'token_indices' missing or not a list"),
    (lambda s: s[0]["segmentation_responses"][0]["propositions"][0].update(token_indices=[0, "1.5"]),
     r"segmentation #0 \(sentence c1:d1:0\) proposition #0: expected a non-negative integer index, got '1.5'"),
    (lambda s: s[0]["segmentation_responses"][0]["propositions"][0].update(token_indices=[0, 7]),
     r"segmentation #0 \(sentence c1:d1:0\) proposition #0: indexes past its sentence's 7 tokens"),
    (lambda s: s[0]["sentence_id"].update(sentence_index=3),
     r"segmentation #0 \(sentence c1:d1:3\): cluster c1 has no such document and sentence"),
])
def test_a_damaged_propositions_file_names_the_file_and_the_record(tmp_path, damage, message):
    clusters = read_clusters(write(tmp_path, "clusters.json", CLUSTERS))
    data = copy.deepcopy(SEGMENTATIONS)
    damage(data)
    with pytest.raises(MalformedInputError, match=r"props\.json: " + message):
        attach_segmentations(clusters, write(tmp_path, "props.json", data))


def test_propositions_whose_cluster_ids_match_nothing_stop_the_run(tmp_path):
    clusters = read_clusters(write(tmp_path, "clusters.json", CLUSTERS))
    other_split = [SEGMENTATIONS[1], {**SEGMENTATIONS[0], "sentence_id": {"cluster_id": "c9", "document_id": "d1",
                                                                          "sentence_index": 0}}]
    with pytest.raises(MalformedInputError, match=r"props\.json: none of its 2 records is a sentence of the 1 "
                                                  r"clusters read \(2 of other clusters\)"):
        attach_segmentations(clusters, write(tmp_path, "props.json", other_split))


def test_table7_refuses_a_split_with_no_segmented_sentence_and_warns_on_an_empty_prediction(tmp_path):
    class Nothing:
        name, stand_in = "predicts nothing", True

        def segment(self, texts):
            return [None for _ in texts]

    with pytest.raises(ValueError, match="split\\(s\\) dev have no sentence with a human segmentation"):
        table7_scores({"dev": []}, {"clause": Nothing()})
    clusters = read_clusters(write(tmp_path, "clusters.json", CLUSTERS))
    attach_segmentations(clusters, write(tmp_path, "props.json", SEGMENTATIONS))
    sentences = [s for c in clusters for d in c.documents.values() for s in d if s.propositions]
    scores = table7_scores({"dev": sentences}, {"clause": Nothing()})
    warnings = table7_warnings(scores)
    assert any(w.startswith("WARNING: the clause segmenter on dev predicted no proposition in 1 sentences")
               for w in warnings)
    assert any("1 malformed or empty" in w for w in warnings)
