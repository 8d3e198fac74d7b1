"""The IMDB reader (multivec.distill.data.imdb) on a tiny fake aclImdb_v1.tar.gz with the official layout."""

import io
import tarfile

import pytest

from multivec.distill.data.imdb import check_counts, read_imdb
from multivec.io import MalformedInputError

# (split, polarity, number, rating): 3 pos + 3 neg per split; unsup and other files must be skipped.
REVIEWS = [(split, pol, n, r) for split in ("train", "test")
           for pol, ratings in (("pos", (10, 7, 8)), ("neg", (1, 4, 2))) for n, r in zip((10, 2, 0), ratings)]


def _add(tar, name, text):
    data = text.encode("utf-8")
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


@pytest.fixture
def archive(tmp_path):
    path = tmp_path / "aclImdb_v1.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for split, pol, n, rating in reversed(REVIEWS):  # not in sorted order: the reader sorts
            _add(tar, f"aclImdb/{split}/{pol}/{n}_{rating}.txt",
                 f"A {pol} {split} review {n}.<br /><br />Caf\u00e9 second line. ")
        _add(tar, "aclImdb/train/unsup/0_0.txt", "unlabelled review")
        _add(tar, "aclImdb/train/urls_pos.txt", "http://www.imdb.com/title/tt0453418/usercomments\n")
        _add(tar, "aclImdb/imdb.vocab", "the\nand\n")
        _add(tar, "aclImdb/README", "Large Movie Review Dataset v1.0\n")
    return path


def test_reader_gives_the_labelled_reviews_of_each_split(archive):
    splits = read_imdb(archive)
    assert set(splits) == {"train", "test"}
    for split in ("train", "test"):
        rows = splits[split]
        assert len(rows) == 6
        assert [r["label"] for r in rows] == [0, 0, 0, 1, 1, 1]  # ordered by (label, number)
        assert [r["id"] for r in rows[:3]] == [f"imdb_{split}_neg_{n}" for n in (0, 2, 10)]
        assert {r["id"]: r["rating"] for r in rows}[f"imdb_{split}_pos_10"] == 10
        assert all(r["label"] == (1 if "_pos_" in r["id"] else 0) for r in rows)
        assert rows[0]["text"] == f"A neg {split} review 0.<br /><br />Caf\u00e9 second line."
    assert not any("unsup" in r["id"] for rows in splits.values() for r in rows)
    assert check_counts(splits, 6, archive) == {s: {"reviews": 6, "pos": 3, "neg": 3} for s in ("train", "test")}


def test_counts_that_differ_from_the_official_ones_fail_naming_the_archive(archive):
    splits = read_imdb(archive)
    with pytest.raises(MalformedInputError, match="aclImdb_v1.tar.gz.*expected 25000 reviews"):
        check_counts(splits, 25000, archive)
    only_pos = {"train": [r for r in splits["train"] if r["label"] == 1], "test": splits["test"]}
    with pytest.raises(MalformedInputError, match="train: no neg reviews"):
        check_counts(only_pos, None, archive)


def test_unreadable_or_missing_archive(tmp_path):
    bad = tmp_path / "aclImdb_v1.tar.gz"
    bad.write_bytes(b"not a tarball")
    with pytest.raises(MalformedInputError, match="aclImdb_v1.tar.gz: not a readable tar archive"):
        read_imdb(bad)
    with pytest.raises(FileNotFoundError, match="missing.tar.gz"):
        read_imdb(tmp_path / "missing.tar.gz")


def test_split_files_feed_the_head_and_the_table(archive, tmp_path):
    import numpy as np

    from multivec.distill.evaluation.classification_head import HeadConfig
    from multivec.distill.data.documents import read_documents
    from multivec.distill.embeddings import write_embeddings
    from multivec.distill.data.imdb import read_labels, write_splits
    from multivec.distill.tables.imdb_table import evaluate_row, imdb_measurements, write_table
    from multivec.io import write_jsonl
    from multivec.statistics import write_units
    import csv

    paths = {s: tmp_path / f"eval_imdb_{s}.jsonl" for s in ("train", "test")}
    write_splits(read_imdb(archive), paths)
    assert [d["id"] for d in read_documents(paths["test"])][:2] == ["imdb_test_neg_0", "imdb_test_neg_2"]
    folders = {}
    for split, path in paths.items():
        ids, labels = read_labels(path)
        vectors = np.outer(2.0 * labels - 1.0, np.ones(4)) + 0.1 * np.arange(len(ids))[:, None]
        folders[split] = write_embeddings(tmp_path / split, ids[::-1], vectors[::-1], {"model": "toy"})
    row, reviews = evaluate_row("toy_row", "structural_teacher", folders, paths,
                                HeadConfig(lr=0.05, epochs=30, device="cpu"))
    assert row["imdb_accuracy"] == 100.0 and (row["n_train"], row["n_test"], row["dimension"]) == (6, 6, 4)
    assert row["model"] == "toy" and row["head_steps"] == 30
    # each test review's prediction is kept, and the per-review units reproduce the accuracy
    test_ids, test_labels = read_labels(paths["test"])
    assert [r["id"] for r in reviews] == test_ids and [r["label"] for r in reviews] == test_labels.tolist()
    write_jsonl(tmp_path / "toy.reviews.jsonl", reviews)
    # a second, worse row at two seeds: its head predicts everything negative
    worse = [{**r, "predicted": 0} for r in reviews]
    for seed in (13, 14):
        write_jsonl(tmp_path / f"worse{seed}.reviews.jsonl", worse)
    measurements = imdb_measurements([{"name": "toy_row", "seed": None, "reviews": tmp_path / "toy.reviews.jsonl"}]
                                     + [{"name": "worse", "seed": s, "reviews": tmp_path / f"worse{s}.reviews.jsonl"}
                                        for s in (13, 14)])
    assert [m.seed for m in measurements] == [None, 13, 14] and measurements[0].values.mean() == row["imdb_accuracy"]
    write_units(tmp_path / "distill_imdb.tables.parquet", measurements)
    statistics = {"alpha": 0.05, "confidence": 0.95, "bootstrap_resamples": 50, "permutation_resamples": 50}
    rows = [row, {**row, "row": "worse", "kind": "student", "imdb_accuracy": 50.0}]
    write_table(rows, tmp_path / "distill_imdb.tables.parquet", [{"row": "toy_row", "against": "worse"}], statistics,
                tmp_path / "t.csv", tmp_path / "t.md", tmp_path / "t_tests.csv")
    with open(tmp_path / "t.csv", newline="") as handle:
        records = list(csv.DictReader(handle))
    assert records[0]["imdb_accuracy"] == "100.0" and records[1]["imdb_accuracy"] == "50.0"
    assert {"imdb_accuracy_lo", "imdb_accuracy_hi", "imdb_accuracy_sd", "n_seeds"} <= set(records[0])
    assert (records[0]["n_seeds"], records[1]["n_seeds"]) == ("1", "2") and records[1]["imdb_accuracy_sd"] == "0.0"
    with open(tmp_path / "t_tests.csv", newline="") as handle:
        tests = list(csv.DictReader(handle))
    assert [(t["row"], t["against"], t["metric"], float(t["difference"])) for t in tests] == [
        ("toy_row", "worse", "imdb_accuracy", 50.0)]
    text = (tmp_path / "t.md").read_text()
    assert "| toy_row | structural_teacher | toy | 4 | 100.00 [100.00, 100.00] |" in text
    assert "Paired comparisons" in text
    paths["train"].write_text('{"id": "x", "text": "t", "label": 3}\n')
    with pytest.raises(MalformedInputError, match="eval_imdb_train.jsonl:1: each row needs"):
        read_labels(paths["train"])
