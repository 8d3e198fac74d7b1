"""Train/test overlap audit: n-gram shares on hand-made corpora and tasks, and the rule that fails the run."""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from multivec.data.overlap import (
    OVERLAP_COLUMNS,
    OverlapError,
    audit_overlap,
    check_overlap,
    measure_overlap,
    ngram_set,
    ngram_table,
    write_overlap,
)
from multivec.io import MalformedInputError, write_jsonl

REPO = Path(__file__).resolve().parents[1]

CORPUS = [("c1", "a b c d e f g h i j"), ("c2", "x a b"), ("c3", "c y z")]
TASK = [
    ("d1", "A, b c D x y"),  # trigrams abc bcd cdx dxy: abc and bcd are in c1 (case and punctuation ignored)
    ("d2", "x y z w"),       # xyz yzw: none; "x a b" and "c y z" are separate corpus documents
    ("d3", "q r"),           # fewer than 3 tokens: no trigram, share 0
    ("d4", "a b c"),         # abc: in c1 (not from c2 + c3, windows never cross documents)
]


def test_shares_on_a_hand_made_corpus_and_task():
    corpus = ngram_set(CORPUS, n=3)
    assert len(corpus) == 8 + 1 + 1  # 8 trigrams of c1, one each of c2, c3
    task = ngram_table(TASK, n=3)
    assert task.ngrams_per_document.tolist() == [4, 2, 0, 1]
    result = measure_overlap("train", corpus, "eval", task, ngram=3, threshold=0.6)
    assert result.n_documents == 4 and result.n_task_ngrams == 7
    assert result.share_documents_with_shared_ngram == pytest.approx(2 / 4)
    assert result.share_ngrams_shared == pytest.approx(3 / 7)
    assert result.max_document_share == 1.0
    assert result.worst == [("d4", 1.0), ("d1", 0.5)]
    assert result.documents_over_threshold == 1 and not result.passed  # d4 (1.0 > 0.6); d1 (0.5) is not
    assert measure_overlap("train", corpus, "eval", task, ngram=3, threshold=1.0).passed


def test_windows_do_not_cross_documents():
    corpus = ngram_set([("c2", "x a b"), ("c3", "c y z")], n=3)
    assert measure_overlap("c", corpus, "t", ngram_table([("t", "a b c")], n=3), ngram=3,
                           threshold=0).share_ngrams_shared == 0.0


def test_hashed_shares_equal_an_exact_set_of_word_tuples():
    rng = random.Random(0)
    words = [f"w{i}" for i in range(30)]
    corpus = [(f"c{i}", " ".join(rng.choices(words, k=rng.randint(0, 60)))) for i in range(200)]
    task = [(f"t{i}", " ".join(rng.choices(words, k=rng.randint(0, 40)))) for i in range(100)]
    task += [(f"copy{i}", corpus[i][1]) for i in range(10)]
    n = 4
    exact = {tuple(text.split()[j:j + n]) for _, text in corpus for j in range(len(text.split()) - n + 1)}
    corpus_set = ngram_set(corpus, n=n, chunk_documents=7)  # chunked building gives the same set
    assert len(corpus_set) == len(exact)
    table = ngram_table(task, n=n)
    result = measure_overlap("c", corpus_set, "t", table, ngram=n, threshold=0.5, n_worst=len(task))
    expected = {}
    for doc_id, text in task:
        grams = [tuple(text.split()[j:j + n]) for j in range(len(text.split()) - n + 1)]
        if grams and any(g in exact for g in grams):
            expected[doc_id] = sum(g in exact for g in grams) / len(grams)
    assert dict(result.worst) == pytest.approx(expected)
    assert all(dict(result.worst)[f"copy{i}"] == 1.0 for i in range(10) if len(corpus[i][1].split()) >= n)


def _write_training_jsonl(path: Path, texts):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"id": f"{path.stem}/{i}", "source": t, "target": t}) + "\n"
                            for i, t in enumerate(texts)))


def _write_ranking_task(folder: Path, docs: dict, queries):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "docs.txt").write_text("".join(f"{i}\t{t}\n" for i, t in docs.items()))
    (folder / "task.jsonl").write_text("".join(json.dumps({"source": s, "candidates": c, "answer": 0}) + "\n"
                                               for s, c in queries))


SENTENCE = "the quick brown fox jumps over the lazy dog near the river bank today"  # 14 tokens, 7 eight-grams


def _demo_layout(root: Path, leak: bool):
    """Training corpora and ranking tasks where the training files the rules name; ``leak`` copies a task query."""
    filler = ["lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor"] * 3
    _write_training_jsonl(root / "data/built/corpora/autoencoding/train.jsonl", filler + ([SENTENCE] if leak else []))
    _write_training_jsonl(root / "data/built/corpora/autoencoding/dev.jsonl", filler[:1])
    _write_training_jsonl(root / "data/built/corpora/translation/train.jsonl", ["ein zwei drei vier fünf sechs sieben acht"])
    _write_training_jsonl(root / "data/built/corpora/translation/dev.jsonl", [])
    for task in ("pi", "rr"):
        docs = {"q1": SENTENCE if task == "rr" else "a different query with many words in it today",
                "a1": "an answer document that shares nothing with any training text at all",
                "n1": "a negative candidate about something else entirely and more words"}
        _write_ranking_task(root / f"data/built/tasks/{task}", docs, [("q1", ["a1", "n1"])])
    # The other works' audited corpora and tasks (sub-sentence encoder, distillation), without overlap.
    other = "unrelated words about gardens rivers and mountains in spring with birds singing loudly"
    write_jsonl(root / "data/built/subencoder/pairs/pairs.jsonl",
                [{"pair_id": "p0", "a": {"id": "s0", "sentence": other}, "b": {"id": "s1", "sentence": other}}])
    clusters = [{"cluster_id": "c0", "documents": [{"document_id": "d0", "sentences": [
        {"sentence_text": "A cluster sentence .", "tokens": [{"text": "A", "character_offset_of_token_in_sentence": 0}]}]}]}]
    (root / "data/raw/propsegment/v1").mkdir(parents=True, exist_ok=True)
    (root / "data/raw/propsegment/v1/document_clusters.dev.json").write_text(json.dumps(clusters), encoding="utf-8")
    for split in ("train", "eval_lee", "eval_polarity", "eval_pi", "eval_rr"):
        write_jsonl(root / f"data/built/distill/{split}.jsonl", [{"id": f"{split}0", "text": other + f" {split}"}])
    # NUGGET beyond Table 2: probability-gain documents, the LM's streams and its test split.
    write_jsonl(root / "data/built/nugget_gain/documents.jsonl", [{"id": "g0", "text": other + " gain"}])
    for split in ("train", "dev", "test"):
        write_jsonl(root / f"data/built/nugget_lm/{split}.jsonl", [{"id": f"lm_{split}0", "text": other + f" {split}"}])


def _specs(root: Path):
    corpora = {o: {"format": "training_jsonl", "files": [root / f"data/built/corpora/{n}/{s}.jsonl" for s in ("train", "dev")]}
               for o, n in (("ae", "autoencoding"), ("mt", "translation"))}
    tasks = {t: {"format": "ranking_task", "files": [root / f"data/built/tasks/{t}/docs.txt",
                                                     root / f"data/built/tasks/{t}/task.jsonl"]} for t in ("pi", "rr")}
    return corpora, tasks


def test_audit_every_corpus_against_every_task(tmp_path):
    _demo_layout(tmp_path, leak=True)
    corpora, tasks = _specs(tmp_path)
    results = audit_overlap(corpora, tasks, ngram=8, max_document_share=0.05)
    by_pair = {(r.corpus, r.task): r for r in results}
    assert sorted(by_pair) == [("ae", "pi"), ("ae", "rr"), ("mt", "pi"), ("mt", "rr")]
    leak = by_pair[("ae", "rr")]
    assert leak.worst == [("q1", 1.0)] and leak.documents_over_threshold == 1 and not leak.passed
    assert leak.share_documents_with_shared_ngram == pytest.approx(1 / 3)
    assert leak.share_ngrams_shared == pytest.approx(7 / leak.n_task_ngrams)
    assert all(r.passed and r.max_document_share == 0 for pair, r in by_pair.items() if pair != ("ae", "rr"))
    with pytest.raises(OverlapError, match=r"training corpus 'ae' overlaps task 'rr'.*q1 \(100.0%\)"):
        check_overlap(results)
    write_overlap(results, tmp_path / "overlap.csv", tmp_path / "overlap.md")
    table = pd.read_csv(tmp_path / "overlap.csv")
    assert list(table.columns) == OVERLAP_COLUMNS and len(table) == 4
    assert table.loc[(table.corpus == "ae") & (table.task == "rr"), "passed"].item() == False  # noqa: E712
    assert "**no**" in (tmp_path / "overlap.md").read_text()


def test_a_scoped_corpus_is_measured_but_not_enforced_outside_its_tasks(tmp_path):
    _demo_layout(tmp_path, leak=True)  # the AE corpus holds RR's query q1
    corpora, tasks = _specs(tmp_path)
    corpora["ae"]["evaluated_on"] = ["pi"]  # e.g. an LM scored on its own test split only
    results = audit_overlap(corpora, tasks, ngram=8, max_document_share=0.05)
    leak = {(r.corpus, r.task): r for r in results}[("ae", "rr")]
    assert leak.documents_over_threshold == 1 and not leak.enforced and leak.passed
    check_overlap(results)  # nothing enforced fails
    write_overlap(results, tmp_path / "overlap.csv", tmp_path / "overlap.md")
    assert "not scored" in (tmp_path / "overlap.md").read_text()
    corpora["ae"]["evaluated_on"] = ["nope"]
    with pytest.raises(ValueError, match="evaluated_on names unknown tasks"):
        audit_overlap(corpora, tasks)


def test_bad_specs_and_files_name_what_is_wrong(tmp_path):
    _demo_layout(tmp_path, leak=False)
    corpora, tasks = _specs(tmp_path)
    with pytest.raises(ValueError, match="corpus 'x': unknown format 'csv'"):
        audit_overlap({"x": {"format": "csv", "files": []}}, tasks)
    with pytest.raises(ValueError, match="task 'pi': no 'files'"):
        audit_overlap(corpora, {"pi": {"format": "ranking_task"}})
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "source": "text"}\n')
    with pytest.raises(MalformedInputError, match=r"bad.jsonl.*1.*target"):
        audit_overlap({"ae": {"format": "training_jsonl", "files": [bad]}}, tasks)
    with pytest.raises(ValueError, match="max_document_share"):
        audit_overlap(corpora, tasks, max_document_share=1.5)


def _audit_rule(root: Path, *extra):
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO / "src"))
    command = [str(Path(sys.executable).parent / "snakemake"), "results/overlap.csv", "-s", str(REPO / "Snakefile"),
               "-d", str(root), "--cores", "1", *extra, "--allowed-rules", "overlap_audit"]  # the built files as given
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def test_the_rule_fails_above_the_threshold_and_passes_below(tmp_path, mirror):
    _demo_layout(tmp_path, leak=True)
    result = _audit_rule(tmp_path)
    out = result.stdout + result.stderr + (tmp_path / "logs/audit/overlap.log").read_text()
    assert result.returncode != 0, out
    assert "training corpus 'ae' overlaps task 'rr'" in out and "q1 (100.0%)" in out, out
    assert not (tmp_path / "results/overlap.csv").exists()  # a failed audit leaves no result for table2 to use
    lenient = tmp_path / "lenient.yaml"
    lenient.write_text("audit: {ngram: 8, max_document_share: 1.0}\n")
    result = _audit_rule(tmp_path, "--configfile", str(lenient))
    assert result.returncode == 0, result.stdout + result.stderr
    table = pd.read_csv(tmp_path / "results/overlap.csv")
    assert table["passed"].all() and table["max_document_share"].max() == 1.0
