"""The oracle segmenter (the demo's training-pair segmenter) and the training build's loud inputs: the oracle gives the
human segmentations of the training split as token spans and never reads an evaluation (dev) cluster; a
segmentation file with a sentence id the pairs do not know stops naming it; unaligned propositions are
counted into the build's meta.json."""
import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from multivec.io import MalformedInputError, read_json, write_jsonl
from multivec.subencoder.data.segmentation import ORACLE_NAME, oracle_from_propsegment, segment_and_align
from multivec.subencoder.data.sentence_pairs import SentencePair
from multivec.subencoder.data.training_rows import SegmentedSentence, build_rows, read_segments
from doubles import fake_snakemake

REPO = Path(__file__).resolve().parents[1]
TEXTS = {"c1:d1:0": "Jolie, who was born in LA, signed on in April 2016.",
         "c1:d2:0": "Jolie signed in April 2016 and filming began in May."}


def _tokens(text):
    import re
    return [{"text": m.group(), "character_offset_of_token_in_sentence": m.start()}
            for m in re.finditer(r"\w+|[^\w\s]", text)]


def write_split(folder: Path, split: str, cluster_id="c1", texts=TEXTS, segmentations=None):
    folder.mkdir(parents=True, exist_ok=True)
    documents = {}
    for key, text in texts.items():
        _, doc, _ = key.split(":")
        documents.setdefault(doc, []).append({"sentence_text": text, "tokens": _tokens(text)})
    clusters = [{"cluster_id": cluster_id, "source_dataset": "SOURCE_WIKI_CLUSTERS",
                 "documents": [{"document_id": d, "sentences": s} for d, s in documents.items()]}]
    if segmentations is None:
        # Jolie(0) ,(1) who(2) was(3) born(4) in(5) LA(6) ,(7) signed(8) on(9) in(10) April(11) 2016(12) .(13)
        segmentations = {"c1:d1:0": [[0, 2, 3, 4, 5, 6], [0, 8, 9, 10, 11, 12, 13]], "c1:d2:0": None}
    records = []
    for key, props in segmentations.items():
        cluster, doc, index = key.split(":")
        response = ({"non_informational": True, "propositions": []} if props is None else
                    {"non_informational": False, "is_reference_response": True,
                     "propositions": [{"token_indices": p} for p in props]})
        records.append({"sentence_id": {"cluster_id": cluster, "document_id": doc, "sentence_index": int(index)},
                        "segmentation_responses": [response]})
    (folder / f"document_clusters.{split}.json").write_text(json.dumps(clusters))
    (folder / f"propositions.{split}.json").write_text(json.dumps(records))
    return folder / f"document_clusters.{split}.json", folder / f"propositions.{split}.json"


@pytest.fixture
def splits(tmp_path):
    test = write_split(tmp_path / "v1", "test")
    dev = write_split(tmp_path / "v1", "dev", cluster_id="c7", texts={"c7:d9:0": "An unrelated dev sentence."},
                      segmentations={"c7:d9:0": [[0, 1, 2]]})
    return test, dev


def test_oracle_gives_the_human_propositions_as_token_spans(splits):
    (clusters, propositions), (dev_clusters, _) = splits
    oracle = oracle_from_propsegment(clusters, propositions, dev_clusters)
    assert oracle.name == ORACLE_NAME == "oracle segmenter (human segmentations)" and oracle.stand_in
    rows, counts = segment_and_align(dict(TEXTS), oracle)
    text = TEXTS["c1:d1:0"]
    first = rows[0]["propositions"]
    assert [[text[a:b] for a, b in p["char_spans"]] for p in first] == [
        ["Jolie", "who was born in LA"], ["Jolie", "signed on in April 2016."]]
    assert first[0]["text"] == "Jolie who was born in LA"
    # the sentence no rater segmented is counted, not invented
    assert rows[1]["propositions"] == [] and (counts.segmented, counts.malformed_or_empty) == (1, 1)
    assert counts.propositions == 2
    with pytest.raises(TypeError, match="by id"):
        oracle.segment([text])


def test_oracle_stops_on_a_sentence_it_does_not_know_or_whose_text_differs(splits):
    (clusters, propositions), (dev_clusters, _) = splits
    oracle = oracle_from_propsegment(clusters, propositions, dev_clusters)
    with pytest.raises(ValueError, match="sentence id 'c1:d3:0' of the pairs is not a sentence"):
        segment_and_align({"c1:d3:0": "Another sentence."}, oracle)
    with pytest.raises(ValueError, match="sentence 'c1:d1:0' has another text"):
        segment_and_align({"c1:d1:0": "Changed."}, oracle)


@pytest.mark.parametrize("what, dev_cluster, dev_texts", [
    ("clusters", "c1", {"c1:d9:0": "An unrelated dev sentence."}),
    ("documents", "c7", {"c7:d1:0": "An unrelated dev sentence."}),
    ("sentence texts", "c7", {"c7:d9:0": TEXTS["c1:d2:0"]}),
])
def test_oracle_never_reads_a_dev_cluster_document_or_sentence(tmp_path, what, dev_cluster, dev_texts):
    clusters, propositions = write_split(tmp_path / "v1", "test")
    dev_clusters, _ = write_split(tmp_path / "v1", "dev", cluster_id=dev_cluster, texts=dev_texts,
                                  segmentations={k: [[0]] for k in dev_texts})
    with pytest.raises(ValueError, match=f"shares 1 {what} .* with the evaluation split .*document_clusters.dev"):
        oracle_from_propsegment(clusters, propositions, dev_clusters)


def _dry_run(tmp_path, overlay: str, target: str) -> subprocess.CompletedProcess:
    config = tmp_path / "overlay.yaml"
    config.write_text(overlay)
    snakemake = str(Path(sys.executable).parent / "snakemake")
    return subprocess.run([snakemake, "-n", "--configfile", str(config), "--directory", str(tmp_path / "run"), target],
                          cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})


def test_the_workflow_gives_the_oracle_the_test_split_and_checks_it_against_dev(tmp_path, mirror):
    result = _dry_run(tmp_path, "subencoder:\n  segmenter:\n    kind: oracle\n",
                      "data/built/subencoder/segments/segments.jsonl")
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    job = out[out.index("rule subencoder_data_segments:"):]
    inputs = job[job.index("input:"):job.index("\n", job.index("input:"))].split(":", 1)[1].split(", ")
    assert sorted(Path(i).name for i in inputs) == [
        "document_clusters.dev.json", "document_clusters.test.json", "pairs.jsonl", "propositions.test.json"]
    assert "propositions.dev.json" not in out  # the dev human segmentations are never an input


def test_a_segmentation_file_with_an_unknown_sentence_id_stops_naming_it(tmp_path):
    path = tmp_path / "segments.jsonl"
    write_jsonl(path, [{"id": "s1", "sentence": "A b c.", "propositions": []},
                       {"id": "s9", "sentence": "X y z.", "propositions": []}])
    with pytest.raises(MalformedInputError, match=r"segments\.jsonl:2: sentence id 's9' is not a sentence of "
                                                  r"pairs\.jsonl"):
        read_segments(path, {"s1", "s2"}, "pairs.jsonl")
    write_jsonl(path, [{"id": "s1", "sentence": "A b c.", "propositions": []}] * 2)
    with pytest.raises(MalformedInputError, match=r"segments\.jsonl:2: sentence id 's1' is given twice"):
        read_segments(path, {"s1"})
    write_jsonl(path, [{"id": "s1", "sentence": "A b c.", "propositions": [{"text": "A b"}]}])
    with pytest.raises(MalformedInputError, match=r"segments\.jsonl:1: sentence 's1' proposition 0"):
        read_segments(path, {"s1"})


class AllPositive:
    name, stand_in = "all positive", True

    def positive(self, pairs):
        return [True] * len(pairs)


def test_unaligned_propositions_are_counted_and_never_kept_with_an_empty_mask():
    pairs = [SentencePair("p0", "a", "A cat sat.", "b", "A cat sat down.")]
    segments = {"a": SegmentedSentence("a", "A cat sat.", [{"text": "A cat sat", "char_spans": [[0, 9]]},
                                                           {"text": "nothing", "char_spans": []}]),
                "b": SegmentedSentence("b", "A cat sat down.", [{"text": "A cat sat", "char_spans": [[0, 9]]}])}
    rows, counts = build_rows(pairs, segments, AllPositive())
    assert counts.propositions_unaligned == 1
    assert all(p["char_spans"] for row in rows for p in row["propositions"])
    assert [len(row["propositions"]) for row in rows] == [1, 1]


def test_the_build_writes_the_unaligned_count_into_meta_json(tmp_path, monkeypatch):
    """Rule subencoder_data_training's script: propositions the segmenter could not align (its meta.json)
    and those with empty spans in the segments are summed into data/built/subencoder/meta.json."""
    import multivec.subencoder.data.nli as nli

    monkeypatch.setattr(nli, "judge_from_config", lambda settings: AllPositive())
    pairs = tmp_path / "pairs.jsonl"
    write_jsonl(pairs, [{"pair_id": "p0", "a": {"id": "a", "sentence": "A cat sat."},
                         "b": {"id": "b", "sentence": "A cat sat down."}}])
    segments = tmp_path / "segments" / "segments.jsonl"
    segments.parent.mkdir()
    write_jsonl(segments, [
        {"id": "a", "sentence": "A cat sat.", "propositions": [{"text": "A cat sat", "char_spans": [[0, 9]]},
                                                              {"text": "x", "char_spans": []}]},
        {"id": "b", "sentence": "A cat sat down.", "propositions": [{"text": "A cat sat", "char_spans": [[0, 9]]}]}])
    (segments.parent / "meta.json").write_text(json.dumps({
        "segmenter": ORACLE_NAME, "stand_in": True, "alignment": None,
        "counts": {"segmented": 2, "propositions": 3, "propositions_unaligned": 4,
                   "propositions_per_segmented_sentence": 1.5}}))
    out = tmp_path / "built"
    out.mkdir()
    snakemake = fake_snakemake(
        {"pairs": pairs, "segments": segments, "segments_meta": segments.parent / "meta.json"},
        {"train": out / "train.jsonl", "dev": out / "dev.jsonl", "meta": out / "meta.json"},
        {"settings": {"dev_fraction": 0.0, "min_kept_pairs": 1}, "linking": "one_to_one", "nli": {"kind": "proxy"},
         "seed": 13},
        tmp_path / "training.log")
    runpy.run_path(str(REPO / "workflow" / "scripts" / "subencoder_data_training.py"),
                   init_globals={"snakemake": snakemake})
    meta = read_json(out / "meta.json")
    assert meta["counts"]["propositions_unaligned"] == 5  # 4 left out by the segmenter + 1 empty span here
    assert meta["segmenter"] == ORACLE_NAME and ORACLE_NAME in meta["stand_ins"]
    assert meta["counts"]["train_rows"] == 2
    assert meta["linking"] == "one_to_one" and meta["counts"]["sibling_labels"] == 0


def test_an_oracle_with_another_pairs_source_stops_before_any_job(tmp_path, mirror):
    result = _dry_run(tmp_path, "subencoder:\n  data:\n    pairs_source: zhou2022\n  segmenter:\n    kind: oracle\n",
                      "data/built/subencoder/segments/segments.jsonl")
    assert result.returncode != 0
    # refused by the config layer (multivec.config.cross_checks) with the key path, before any rule file is read
    assert ("subencoder.segmenter.kind: 'oracle' reads PropSegment's human segmentations"
            in result.stdout + result.stderr)
    assert "subencoder.data.pairs_source: propsegment_test (got 'zhou2022')" in result.stdout + result.stderr
