"""Two families of bad input, each closed at the step that reads the input, naming the file (and record or key).

Family 4, a source that shrank: a copy of a registered file (data/raw/<source>/<file>, or its mirror path)
that is not the registered file (another sha256) and holds other counts than the registry's
(``multivec.data.sources.REGISTERED_COUNTS``) warns naming the file and both counts, or stops below half.

Family 5, messages that blame the wrong thing or none: (a) a PropSegment id given twice is refused naming the
file and both records; (b) a missing or incomplete NLTK resource stops naming the resource, $NLTK_DATA and the
mirror's nltk_data folder; (c) table2.pi.n_queries above the released task's queries names the key and both
numbers.
"""

from __future__ import annotations

import json
import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from multivec.data.sources import (REGISTERED_COUNTS, SourceShrankError, check_registered_counts, get_file,
                                   registered_file_of)
from multivec.io import MalformedInputError
from doubles import fake_snakemake

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def mirror_root(mirror) -> Path:
    return Path(mirror)


# ------------------------------------------------------------------ family 4: a source that shrank

def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def _wikitext_without_last_article(lines: list[str]) -> list[str]:
    titles = [i for i, line in enumerate(lines) if line.startswith(" = ") and not line.startswith(" = = ")]
    return lines[:titles[-1]]


def _wikitext_without_a_middle_section(lines: list[str]) -> list[str]:
    sections = [i for i, line in enumerate(lines) if line.startswith(" = = ") and not line.startswith(" = = = ")]
    middle = len(sections) // 2
    return lines[:sections[middle]] + lines[sections[middle + 1]:]


def _json_list(keep):
    def edit(text: str) -> str:
        data = json.loads(text)
        return json.dumps(keep(data))
    return edit


def _read_wikitext(path, warnings):
    from multivec.data.wikitext import parse_wikitext
    return parse_wikitext(path, warnings)


def _read_wikitext_paragraphs(path, warnings):
    from multivec.data.corpora import read_paragraphs
    return list(read_paragraphs("wikitext2", path, warnings))


def _read_pairs(path, warnings):
    from multivec.data.corpora import read_debian_reference_pairs
    return read_debian_reference_pairs(path, warnings)


def _read_clusters(path, warnings):
    from multivec.subencoder.data.propsegment import read_clusters
    return read_clusters(path, warnings)


def _attach(mirror_root):
    def read(path, warnings):
        from multivec.subencoder.data.propsegment import attach_segmentations, read_clusters
        clusters = read_clusters(mirror_root / "propsegment/v1/document_clusters.dev.json")
        return attach_segmentations(clusters, path, warnings)
    return read


def _released_pi(path, warnings):
    """What the pi_task script does with the released task: load it, compare it with the registry."""
    from multivec.tasks.ranking_task import RankingTask
    task = RankingTask.load(path.parent)
    check_registered_counts(path.parent / "task.jsonl", {"queries": task.n_queries}, warnings)
    check_registered_counts(path.parent / "docs.txt", {"documents": len(task.documents)}, warnings)
    return task


# (case id, source, file, edit of the copy's text lines or JSON text, reader, "warn" or "stop", counts named)
SHRUNK = [
    ("wikitext-valid-last-article-gone", "wikitext2", "valid.txt", _wikitext_without_last_article,
     _read_wikitext, "warn", "59 articles (registered 60)"),
    ("wikitext-test-middle-section-gone", "wikitext2", "test.txt", _wikitext_without_a_middle_section,
     _read_wikitext, "warn", "(registered 349)"),
    ("wikitext-valid-last-lines-gone", "wikitext2", "valid.txt", lambda lines: lines[:-40],
     _read_wikitext, "warn", "(registered 3760)"),
    ("wikitext-valid-truncated-to-a-quarter", "wikitext2", "valid.txt", lambda lines: lines[:len(lines) // 4],
     _read_wikitext, "stop", "(registered 60)"),
    ("wikitext-test-emptied", "wikitext2", "test.txt", lambda lines: [],
     _read_wikitext, "stop", "0 articles (registered 62)"),
    ("wikitext-paragraphs-for-the-ae-corpus", "wikitext2", "valid.txt", _wikitext_without_last_article,
     _read_wikitext_paragraphs, "warn", "59 articles (registered 60)"),
    ("debian-pairs-last-16-gone", "debian_reference", "pairs.jsonl", lambda lines: lines[:-16],
     _read_pairs, "warn", "2600 pairs (registered 2616)"),
    ("debian-pairs-first-hundred-only", "debian_reference", "pairs.jsonl", lambda lines: lines[:100],
     _read_pairs, "stop", "100 pairs (registered 2616)"),
    ("propsegment-clusters-one-gone", "propsegment", "v1/document_clusters.dev.json",
     _json_list(lambda data: data[:-1]), _read_clusters, "warn", "14 clusters (registered 15)"),
    ("propsegment-clusters-three-left", "propsegment", "v1/document_clusters.test.json",
     _json_list(lambda data: data[:3]), _read_clusters, "stop", "3 clusters (registered 24)"),
    ("propsegment-propositions-news-records-gone", "propsegment", "v1/propositions.dev.json",
     _json_list(lambda data: data[:700]), "attach", "warn", "700 records (registered 811)"),
    ("pi-released-queries-halved-and-more", "nugget_pi", "dev/task.jsonl", lambda lines: lines[:300],
     _released_pi, "stop", "300 queries (registered 1024)"),
    ("pi-released-last-queries-gone", "nugget_pi", "dev/task.jsonl", lambda lines: lines[:1000],
     _released_pi, "warn", "1000 queries (registered 1024)"),
]


def _copy_edited(mirror_root: Path, tmp_path: Path, source: str, file: str, edit) -> Path:
    """The registered file copied to tmp/data/raw/<source>/<file> (the DAG's layout), edited."""
    origin = mirror_root / get_file(source, file).mirror_path
    folder = tmp_path / "data" / "raw" / source
    if source == "nugget_pi":  # the released task needs its docs.txt next to it
        shutil.copytree(origin.parent, folder / Path(file).parent)
    dest = folder / file
    dest.parent.mkdir(parents=True, exist_ok=True)
    text = origin.read_text(encoding="utf-8")
    if file.endswith(".json"):
        dest.write_text(edit(text), encoding="utf-8")
    else:
        dest.write_text("".join(edit(text.splitlines(keepends=True))), encoding="utf-8")
    return dest


@pytest.mark.parametrize("case", SHRUNK, ids=[c[0] for c in SHRUNK])
@pytest.mark.parametrize("share", [None, 0.5], ids=["warn-only (default)", "stop-below-half"])
def test_a_copy_that_shrank_is_named_with_both_counts(case, share, mirror_root, tmp_path, caplog, monkeypatch):
    """By default every shrunk copy warns (into the build's warnings and log); with
    SOURCE_SHRINK_ERROR_SHARE = 0.5 the copies below half stop at the reader instead."""
    _, source, file, edit, reader, outcome, named = case
    monkeypatch.setattr("multivec.data.sources.SOURCE_SHRINK_ERROR_SHARE", share)
    outcome = "warn" if share is None else outcome
    if reader == "attach":
        reader = _attach(mirror_root)
    path = _copy_edited(mirror_root, tmp_path, source, file, edit)
    warnings: list[str] = []
    if outcome == "stop":
        with pytest.raises(SourceShrankError) as raised:
            reader(path, warnings)
        message = str(raised.value)
    else:
        try:
            reader(path, warnings)
        except (ValueError, RuntimeError):  # an emptied copy still stops later (the reader's zero or language check)
            pass
        assert len(warnings) == 1, warnings
        message = warnings[0]
        assert message in caplog.text  # logged too (the rule's log)
    assert message.startswith(str(path)) and named in message and f"{source}/{file}" in message, message


@pytest.mark.parametrize("source,file", sorted(REGISTERED_COUNTS), ids=lambda v: str(v))
def test_every_registered_count_is_what_the_mirror_holds(source, file, mirror_root, tmp_path, monkeypatch):
    """The registered copy passes silently wherever it lies (mirror or data/raw), and the counts are real:
    the same file with a changed digest but the same counts passes too."""
    origin = mirror_root / get_file(source, file).mirror_path
    assert registered_file_of(origin) == (source, file)
    raw = tmp_path / "data" / "raw" / source / file
    raw.parent.mkdir(parents=True)
    raw.write_bytes(origin.read_bytes() + (b"\n" if not file.endswith(".json") else b" "))  # another digest
    assert registered_file_of(raw) == (source, file)
    counts = REGISTERED_COUNTS[(source, file)]
    warnings: list[str] = []
    check_registered_counts(raw, counts, warnings)
    assert warnings == []
    monkeypatch.setattr("multivec.data.sources.SOURCE_SHRINK_ERROR_SHARE", 0.5)
    with pytest.raises(SourceShrankError, match=f"{source}/{file}"):
        check_registered_counts(raw, {what: 0 for what in counts}, warnings)


def test_the_readers_count_what_the_registry_records(mirror_root):
    """The readers on the mirror's files find exactly the registered counts (nothing warns, nothing changes)."""
    from multivec.subencoder.data.propsegment import attach_segmentations, read_clusters

    warnings: list[str] = []
    for split in ("valid", "test"):
        assert len(_read_wikitext(mirror_root / f"wikitext-2/{split}.txt", warnings)) == \
            REGISTERED_COUNTS[("wikitext2", f"{split}.txt")]["articles"]
    assert len(_read_pairs(mirror_root / "debian-reference/pairs.jsonl", warnings)) == 2616
    for split in ("dev", "test"):
        clusters = read_clusters(mirror_root / f"propsegment/v1/document_clusters.{split}.json", warnings)
        assert len(clusters) == REGISTERED_COUNTS[("propsegment", f"v1/document_clusters.{split}.json")]["clusters"]
        counts = attach_segmentations(clusters, mirror_root / f"propsegment/v1/propositions.{split}.json", warnings)
        assert counts.records == REGISTERED_COUNTS[("propsegment", f"v1/propositions.{split}.json")]["records"]
    assert _released_pi(mirror_root / "nugget-data/paraphrase_identification/dev/task.jsonl", warnings).n_queries \
        == 1024
    assert warnings == []


def test_a_file_that_is_no_registered_copy_is_not_compared(tmp_path):
    path = tmp_path / "elsewhere" / "valid.txt"
    path.parent.mkdir()
    path.write_text(" = A = \n text here .\n", encoding="utf-8")
    assert registered_file_of(path) is None
    check_registered_counts(path, {"articles": 1})


# ------------------------------------------------------------------ family 5a: PropSegment ids given twice

def _duplicate_cluster(clusters):
    return clusters + [clusters[0]]


def _duplicate_document_in_its_cluster(clusters):
    clusters[1]["documents"].append(dict(clusters[1]["documents"][0], sentences=[]))
    return clusters


def _duplicate_document_in_another_cluster(clusters):
    clusters[2]["documents"].append(clusters[0]["documents"][1])
    return clusters


def _duplicate_document_as_number(clusters):
    document = clusters[0]["documents"][0]
    clusters[3]["documents"].append(dict(document, document_id=int(document["document_id"]))
                                    if str(document["document_id"]).isdigit() else document)
    return clusters


CLUSTER_DUPLICATES = [
    ("cluster-id-twice", _duplicate_cluster, "cluster #15", "duplicate cluster id", "first given by cluster #0"),
    ("document-twice-in-its-cluster", _duplicate_document_in_its_cluster, "cluster #1", "duplicate document id",
     "first given by cluster #1"),
    ("document-in-two-clusters", _duplicate_document_in_another_cluster, "cluster #2", "duplicate document id",
     "first given by cluster #0"),
    ("document-id-as-a-number", _duplicate_document_as_number, "cluster #3", "duplicate document id",
     "first given by cluster #0"),
]


@pytest.mark.parametrize("case", CLUSTER_DUPLICATES, ids=[c[0] for c in CLUSTER_DUPLICATES])
def test_a_propsegment_id_given_twice_in_the_clusters_is_refused(case, mirror_root, tmp_path):
    from multivec.subencoder.data.propsegment import load_split

    _, edit, second, what, first = case
    data = json.loads((mirror_root / "propsegment/v1/document_clusters.dev.json").read_text(encoding="utf-8"))
    folder = tmp_path / "copy"
    folder.mkdir()
    (folder / "document_clusters.dev.json").write_text(json.dumps(edit(data)), encoding="utf-8")
    shutil.copyfile(mirror_root / "propsegment/v1/propositions.dev.json", folder / "propositions.dev.json")
    with pytest.raises(MalformedInputError) as raised:
        load_split(folder, "dev")  # the propositions file must not be blamed
    message = str(raised.value)
    assert message.startswith(str(folder / "document_clusters.dev.json")), message
    assert second in message and what in message and first in message


def _record_repeated(records, wiki_ids):
    wiki = [n for n, r in enumerate(records) if str(r["sentence_id"]["cluster_id"]) in wiki_ids]
    return records + [records[wiki[3]]], len(records), wiki[3]


def _record_repeated_with_other_responses(records, wiki_ids):
    wiki = [n for n, r in enumerate(records) if str(r["sentence_id"]["cluster_id"]) in wiki_ids]
    repeated = dict(records[wiki[0]], segmentation_responses=records[wiki[1]]["segmentation_responses"])
    return records[:5] + [repeated] + records[5:], 5, wiki[0] + (1 if wiki[0] >= 5 else 0)


def _record_repeated_with_index_as_string(records, wiki_ids):
    wiki = [n for n, r in enumerate(records) if str(r["sentence_id"]["cluster_id"]) in wiki_ids]
    original = records[wiki[2]]
    sid = dict(original["sentence_id"], sentence_index=str(original["sentence_id"]["sentence_index"]))
    return records + [dict(original, sentence_id=sid)], len(records), wiki[2]


def _news_record_repeated(records, wiki_ids):
    news = [n for n, r in enumerate(records) if str(r["sentence_id"]["cluster_id"]) not in wiki_ids]
    return records + [records[news[0]]], len(records), news[0]


PROPOSITION_DUPLICATES = [
    ("same-record-twice", _record_repeated),
    ("second-record-other-responses", _record_repeated_with_other_responses),
    ("sentence-index-as-string", _record_repeated_with_index_as_string),
    ("news-cluster-record-twice", _news_record_repeated),
]


@pytest.mark.parametrize("case", PROPOSITION_DUPLICATES, ids=[c[0] for c in PROPOSITION_DUPLICATES])
def test_a_sentence_segmented_twice_in_the_propositions_is_refused(case, mirror_root, tmp_path):
    from multivec.subencoder.data.propsegment import attach_segmentations, read_clusters

    records = json.loads((mirror_root / "propsegment/v1/propositions.dev.json").read_text(encoding="utf-8"))
    clusters = read_clusters(mirror_root / "propsegment/v1/document_clusters.dev.json")
    edited, second, first = case[1](records, {c.cluster_id for c in clusters})
    path = tmp_path / "propositions.dev.json"
    path.write_text(json.dumps(edited), encoding="utf-8")
    with pytest.raises(MalformedInputError) as raised:
        attach_segmentations(clusters, path)
    message = str(raised.value)
    assert message.startswith(str(path)), message
    assert f"segmentation #{second}:" in message and f"first given by segmentation #{first}" in message, message


# ------------------------------------------------------------------ family 5b: NLTK data missing or incomplete

LOADERS = {
    "sentence splitter": "from multivec.data.corpora import english_sentence_splitter\n"
                         "english_sentence_splitter()('One. Two.')",
    "sentence ends": "from multivec.nugget.sentence_share import document_sentence_ends\n"
                     "document_sentence_ends(['One. Two.'])",
    "alignment": "from multivec.subencoder.data.alignment import normalise\nnormalise('dogs')",
}
NLTK_CASES = [  # (id, loader, resource, files of the mirror's resource folder left out; None: the folder)
    ("punkt-without-sent-starters", "sentence splitter", "tokenizers/punkt_tab", ["english/sent_starters.txt"]),
    ("punkt-without-ortho-context", "sentence ends", "tokenizers/punkt_tab", ["english/ortho_context.tab"]),
    ("punkt-without-english", "sentence splitter", "tokenizers/punkt_tab", ["english"]),
    ("punkt-absent", "sentence ends", "tokenizers/punkt_tab", None),
    ("wordnet-without-data-adj", "alignment", "corpora/wordnet", ["data.adj"]),
    ("wordnet-without-index-noun", "alignment", "corpora/wordnet", ["index.noun"]),
    ("wordnet-absent", "alignment", "corpora/wordnet", None),
]


@pytest.mark.parametrize("case", NLTK_CASES, ids=[c[0] for c in NLTK_CASES])
def test_missing_nltk_data_names_the_resource_nltk_data_and_the_mirror(case, mirror_root, tmp_path):
    """Each case in a fresh interpreter (NLTK caches what it loaded): a data mirror whose nltk_data lacks
    the resource or one of its files, no $NLTK_DATA, no download."""
    _, loader, resource, left_out = case
    mirror = tmp_path / "mirror"
    shutil.copytree(mirror_root / "nltk_data", mirror / "nltk_data")
    folder = mirror / "nltk_data" / resource
    for name in (left_out or [""]):
        target = folder / name
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    env = {k: v for k, v in os.environ.items() if k != "NLTK_DATA"}
    env.update(MULTIVEC_DATA_MIRROR=str(mirror), HOME=str(tmp_path))
    script = "import nltk\nnltk.download = lambda *a, **k: False\n" + LOADERS[loader]
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("multivec.data.nltk_resources.NltkResourceError: "), result.stderr[-2000:]
    assert resource in last and "$NLTK_DATA (not set)" in last, last
    assert f"$MULTIVEC_DATA_MIRROR/nltk_data ({mirror / 'nltk_data'})" in last, last


# ------------------------------------------------------------------ family 5c: n_queries above the task

N_QUERIES = [  # (id, queries kept in the released copy, table2.pi.n_queries)
    ("one-above-the-release", 1024, 1025),
    ("far-above-the-release", 1024, 5000),
    ("above-a-release-that-shrank", 1000, 1024),
]


@pytest.mark.parametrize("case", N_QUERIES, ids=[c[0] for c in N_QUERIES])
def test_n_queries_above_the_released_task_names_the_key_and_both_numbers(case, mirror_root, tmp_path):
    _, kept, asked = case
    task = _copy_edited(mirror_root, tmp_path, "nugget_pi", "dev/task.jsonl", lambda lines: lines[:kept])
    out = tmp_path / "built" / "pi"
    out.mkdir(parents=True)
    snakemake = fake_snakemake(
        {"docs": task.parent / "docs.txt", "task": task},
        {"docs": out / "docs.txt", "task": out / "task.jsonl", "meta": out / "meta.json"},
        {"settings": {"source": "released", "n_queries": asked, "min_queries": None, "document_tokens": 512},
         "max_tokens": 512, "seed": 0, "encoder": "tiny-random-bert", "checks": {"max_unknown_share": 0.01}},
        tmp_path / "pi.log", config={})
    with pytest.raises(ValueError) as raised:
        runpy.run_path(str(REPO / "workflow" / "scripts" / "pi_task.py"), init_globals={"snakemake": snakemake})
    message = str(raised.value)
    assert "table2.pi.n_queries" in message and f"is {asked}," in message and f"holds {kept} queries" in message
    assert str(task) in message
    assert not (out / "task.jsonl").exists()
