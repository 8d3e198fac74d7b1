"""The distillation table (Burian 2023): teacher concatenation, rows (one entry per row and seed) with dimension
and training minutes, per-unit scores -> CI columns, the declared comparisons and claim verdicts, and a
smoke-scale end-to-end from training to the table."""

import csv
from pathlib import Path

import numpy as np
import pytest

from multivec.distill.tables.main_table import build_rows, concatenate_embeddings, write_table
from multivec.distill.evaluation.demo_tasks import UnitScores
from multivec.distill import embeddings
from multivec.distill.configuration import LossConfig, StudentConfig
from multivec.distill.tables.statistics import embedding_measurements
from multivec.statistics import read_units, write_units
from multivec.distill.training import embed_documents, train
from multivec.io import write_json, write_jsonl
from multivec.training import TrainConfig



def first_coordinate_units(task, folder, task_files):
    """A real, simple per-unit evaluator for the tests: each document's first coordinate x 100 (statistic mean)."""
    ids, vectors, _ = embeddings.read_embeddings(folder)
    return {f"{task}_first": UnitScores("mean", list(ids), 100.0 * np.asarray(vectors[:, 0], dtype=np.float64))}


def test_concatenation_normalises_each_side_and_aligns_ids(tmp_path):
    embeddings.write_embeddings(tmp_path / "a", ["x", "y"], np.array([[3.0, 4.0], [0.0, 2.0]]), {"model": "A"})
    embeddings.write_embeddings(tmp_path / "b", ["y", "x"], np.array([[0.0, 0.0, 5.0], [2.0, 0.0, 0.0]]),
                                {"model": "B"})
    concatenate_embeddings([tmp_path / "a", tmp_path / "b"], tmp_path / "ab")
    ids, vectors, meta = embeddings.read_embeddings(tmp_path / "ab")
    assert ids == ["x", "y"] and meta["dimension"] == 5 and meta["model"] == "A + B"
    np.testing.assert_allclose(vectors, [[0.6, 0.8, 1.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0, 1.0]], atol=1e-6)
    embeddings.write_embeddings(tmp_path / "c", ["x", "z"], np.ones((2, 2)), {"model": "C"})
    with pytest.raises(ValueError, match="ids differ"):
        concatenate_embeddings([tmp_path / "a", tmp_path / "c"], tmp_path / "ac")


STATISTICS = {"alpha": 0.05, "confidence": 0.95, "bootstrap_resamples": 100, "permutation_resamples": 100}


def _entries(tmp_path, tasks=("lee", "pi")):
    """Teacher, untrained student (seed None) and a student at seeds 13 and 14 whose first coordinate is 1 + noise."""
    rng = np.random.default_rng(0)
    entries = []
    for name, kind, dim, seed, shift in [("structural_teacher", "structural_teacher", 4, None, 0.0),
                                         ("student_untrained", "untrained_student", 3, None, 0.0),
                                         ("student_both", "student", 4, 13, 1.0),
                                         ("student_both", "student", 4, 14, 1.0)]:
        folders = {}
        for task in tasks:
            folders[task] = tmp_path / f"{name}{seed}" / task
            vectors = rng.normal(scale=0.1, size=(30, dim))
            vectors[:, 0] += shift
            embeddings.write_embeddings(folders[task], [f"d{k}" for k in range(30)], vectors, {"model": name})
        entry = {"name": name, "kind": kind, "seed": seed, "embeddings": folders, "model": name,
                 "loss": "cosine+soft_cca" if kind == "student" else ""}
        if kind == "student":
            write_json(tmp_path / f"{name}{seed}" / "training_summary.json", {"train_minutes": 1.0 + (seed == 14)})
            entry["summary"] = tmp_path / f"{name}{seed}" / "training_summary.json"
        entries.append(entry)
    return entries


def test_build_rows_one_row_per_name_with_dimension_and_mean_minutes(tmp_path):
    table = build_rows(_entries(tmp_path), ["lee", "pi"])
    assert [r["row"] for r in table] == ["structural_teacher", "student_untrained", "student_both"]
    assert [r["dimension"] for r in table] == [4, 3, 4]
    assert [r["train_minutes"] for r in table] == ["", "", 1.5]
    assert all(np.isnan(r["lee_pearson"]) and np.isnan(r["pi_mrr"]) for r in table)  # filled from the units


def test_measurements_carry_each_seed_and_write_one_unit_file(tmp_path):
    entries = _entries(tmp_path)
    measurements = embedding_measurements(entries, ["lee", "pi"], {"lee": {}, "pi": {}},
                                          evaluate_units=first_coordinate_units)
    assert [(m.row, m.metric, m.seed) for m in measurements][-2:] == [("student_both", "lee_first", 14),
                                                                      ("student_both", "pi_first", 14)]
    write_units(tmp_path / "distill_table.tables.parquet", measurements)
    back = read_units(tmp_path / "distill_table.tables.parquet")
    assert {(m.row, m.seed) for m in back} == {("structural_teacher", None), ("student_untrained", None),
                                               ("student_both", 13), ("student_both", 14)}
    del entries[0]["embeddings"]["pi"]
    with pytest.raises(KeyError, match="structural_teacher"):
        embedding_measurements(entries, ["lee", "pi"], {"lee": {}, "pi": {}}, evaluate_units=first_coordinate_units)


def test_table_has_ci_columns_the_declared_comparisons_and_claim_verdicts(tmp_path, monkeypatch):
    import multivec.distill.evaluation.demo_tasks as evaluation

    monkeypatch.setitem(evaluation.METRICS, "lee", ("lee_first",))
    monkeypatch.setitem(evaluation.METRICS, "pi", ("pi_first",))
    entries = _entries(tmp_path)
    write_units(tmp_path / "distill_table.tables.parquet", embedding_measurements(entries, ["lee", "pi"], {"lee": {}, "pi": {}},
                                                                   evaluate_units=first_coordinate_units))
    claims = tmp_path / "claims.yaml"
    claims.write_text("""claims:
  - id: T1
    work: distill
    claim: the student beats the untrained student
    source: test
    paper: none
    rule: {kind: greater, table: distill_table, metric: lee_first, a: {row: student_both}, b: {row: student_untrained}}
""")
    comparisons = [{"row": "student_both", "against": ["student_untrained", "structural_teacher"]}]
    write_table(build_rows(entries, ["lee", "pi"]), ["lee", "pi"], tmp_path / "distill_table.tables.parquet", comparisons,
                STATISTICS, tmp_path / "t.csv", tmp_path / "t.md", tmp_path / "t_tests.csv", note="demo",
                claims_file=claims, claims={**STATISTICS, "scale": "smoke", "skip": {}})
    with open(tmp_path / "t.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["row"] for r in rows] == ["structural_teacher", "student_untrained", "student_both"]
    header = list(rows[0])
    assert header[header.index("lee_first"):header.index("lee_first") + 4] == [
        "lee_first", "lee_first_lo", "lee_first_hi", "lee_first_sd"]
    assert [r["n_seeds"] for r in rows] == ["1", "1", "2"] and rows[0]["lee_first_sd"] == ""
    student = rows[2]
    assert float(student["lee_first_lo"]) < float(student["lee_first"]) < float(student["lee_first_hi"])
    assert float(student["lee_first"]) == pytest.approx(100.0, abs=5) and float(student["lee_first_sd"]) >= 0
    with open(tmp_path / "t_tests.csv") as handle:
        tests = list(csv.DictReader(handle))
    assert [(t["row"], t["against"], t["metric"]) for t in tests] == [
        ("student_both", "student_untrained", "lee_first"), ("student_both", "student_untrained", "pi_first"),
        ("student_both", "structural_teacher", "lee_first"), ("student_both", "structural_teacher", "pi_first")]
    assert all(t["significant"] == "True" for t in tests)
    text = (tmp_path / "t.md").read_text()
    assert "| student_both | student_both | cosine+soft_cca |" in text and " ±" in text
    assert "Paired comparisons" in text and "T1" in text and "holds" in text


def test_smoke_end_to_end_train_embed_and_table(tmp_path):
    words = "news about rivers trees cities markets storms elections games music films".split()
    rng = np.random.default_rng(1)
    docs = [{"id": f"t{i}", "text": " ".join(rng.choice(words, size=int(rng.integers(5, 40))))} for i in range(12)]
    evals = [{"id": f"e{i}", "text": " ".join(rng.choice(words, size=8))} for i in range(5)]
    write_jsonl(tmp_path / "train.jsonl", docs)
    write_jsonl(tmp_path / "eval_lee.jsonl", evals)
    for side, dim in (("structural", 16), ("contextual", 6)):
        for split, rows in (("train", docs), ("eval_lee", evals)):
            embeddings.write_embeddings(tmp_path / side / split, [d["id"] for d in rows],
                                        rng.normal(size=(len(rows), dim)), {"model": side})
    student = StudentConfig(backbone="tiny-random-bert", max_tokens=30, chunk_tokens=12, contextual_head=[4],
                            teacher_head=[4])
    cfg = TrainConfig(max_steps=3, batch_size=4, eval_every=3, checkpoint_every=3, threads=1, device="cpu")
    train(student, LossConfig(), cfg, tmp_path / "train.jsonl", tmp_path / "structural" / "train",
          tmp_path / "contextual" / "train", tmp_path / "model")
    meta = embed_documents(tmp_path / "eval_lee.jsonl", tmp_path / "student_eval", model_dir=tmp_path / "model")
    assert meta["dimension"] == 32 and meta["n"] == 5  # the student's own embedding, not the 16-d head
    untrained = embed_documents(tmp_path / "eval_lee.jsonl", tmp_path / "untrained_eval", student_config=student)
    assert untrained["dimension"] == 32  # the tiny backbone's hidden size, no head
    concatenate_embeddings([tmp_path / "structural" / "eval_lee", tmp_path / "contextual" / "eval_lee"],
                           tmp_path / "concat_eval")
    rows = [{"name": "sbert", "kind": "structural_teacher", "embeddings": {"lee": tmp_path / "structural" / "eval_lee"}},
            {"name": "pv", "kind": "contextual_teacher", "embeddings": {"lee": tmp_path / "contextual" / "eval_lee"}},
            {"name": "both_teachers", "kind": "teachers_concatenated", "embeddings": {"lee": tmp_path / "concat_eval"}},
            {"name": "untrained", "kind": "untrained_student", "embeddings": {"lee": tmp_path / "untrained_eval"}},
            {"name": "student", "kind": "student", "loss": "cosine+soft_cca", "seed": 13, "summary": tmp_path /
             "model" / "training_summary.json", "embeddings": {"lee": tmp_path / "student_eval"}}]
    table = build_rows(rows, ["lee"])
    assert [r["dimension"] for r in table] == [16, 6, 22, 32, 32]
    assert table[-1]["train_minutes"] != ""
    measurements = embedding_measurements(rows, ["lee"], {"lee": {}}, evaluate_units=first_coordinate_units)
    assert [m.seed for m in measurements] == [None, None, None, None, 13]



def test_the_frozen_backbone_row_equals_the_untrained_row_and_lengths_are_reported(tmp_path):
    """The frozen-backbone sanity row at smoke scale: heads trained on a frozen backbone, embedded by the rule's code,
    hold exactly the untrained student's vectors; a differing row stops the table naming both folders."""
    from multivec.distill.tables.main_table import SanityRowError, check_frozen_rows, frozen_check, length_lines

    words = "news about rivers trees cities markets storms elections games music films".split()
    rng = np.random.default_rng(2)
    docs = [{"id": f"t{i}", "text": " ".join(rng.choice(words, size=int(rng.integers(5, 40))))} for i in range(12)]
    evals = [{"id": f"e{i}", "text": " ".join(rng.choice(words, size=int(rng.integers(3, 50))))} for i in range(5)]
    write_jsonl(tmp_path / "train.jsonl", docs)
    write_jsonl(tmp_path / "eval_lee.jsonl", evals)
    for side, dim in (("structural", 16), ("contextual", 6)):
        embeddings.write_embeddings(tmp_path / side, [d["id"] for d in docs], rng.normal(size=(12, dim)),
                                    {"model": side})
    student = StudentConfig(backbone="tiny-random-bert", max_tokens=30, chunk_tokens=12, contextual_head=[4],
                            teacher_head=[4])
    frozen = StudentConfig(**{**student.to_dict(), "freeze_backbone": True})
    cfg = TrainConfig(max_steps=3, batch_size=4, lr=1e-2, eval_every=3, checkpoint_every=3, threads=1, device="cpu")
    train(frozen, LossConfig(), cfg, tmp_path / "train.jsonl", tmp_path / "structural", tmp_path / "contextual",
          tmp_path / "frozen")
    train(student, LossConfig(), cfg, tmp_path / "train.jsonl", tmp_path / "structural", tmp_path / "contextual",
          tmp_path / "trained")
    embed_documents(tmp_path / "eval_lee.jsonl", tmp_path / "frozen_eval", model_dir=tmp_path / "frozen")
    embed_documents(tmp_path / "eval_lee.jsonl", tmp_path / "trained_eval", model_dir=tmp_path / "trained")
    meta = embed_documents(tmp_path / "eval_lee.jsonl", tmp_path / "untrained_eval", student_config=student,
                           teacher_limit=20)
    rows = [{"name": "untrained", "kind": "untrained_student", "embeddings": {"lee": tmp_path / "untrained_eval"}},
            {"name": "frozen", "kind": "student", "frozen": True, "embeddings": {"lee": tmp_path / "frozen_eval"}}]
    assert check_frozen_rows(rows, ["lee"]) == 1
    # the committed record the table reads (rule distill_frozen_check)
    assert frozen_check(rows, ["lee"]) == {"frozen_rows": ["frozen"], "equal_to": "untrained", "tasks": ["lee"],
                                           "pairs_checked": 1}
    trained = [rows[0], {**rows[1], "embeddings": {"lee": tmp_path / "trained_eval"}}]
    with pytest.raises(SanityRowError, match=r"trained_eval differs from .*untrained_eval"):
        check_frozen_rows(trained, ["lee"])
    lengths = meta["lengths"]
    assert lengths["truncated"] == sum(len(e["text"].split()) > 30 for e in evals)  # one token a word here
    assert lengths["longer_than_structural_teacher"] == sum(len(e["text"].split()) > 18 for e in evals)
    lines = length_lines(rows, ["lee"])
    assert lines[4].startswith(f"| lee | 5 | {lengths['max_length']} | {lengths['longer_than_structural_teacher']} (")


def test_the_distillation_claims_train_only_the_students_a_claim_names(mirror, tmp_path):
    """results/claims/distill.csv trains every claimed student at each claim seed; the frozen sanity row (named
    by no claim) trains at the table seeds only. It once trained at every claim seed: 3 of 12 trainings and
    12 of 48 embedding jobs that no claim read."""
    import os
    import re
    import subprocess
    import sys

    env = dict(os.environ, HF_HUB_OFFLINE="1")
    result = subprocess.run([str(Path(sys.executable).parent / "snakemake"), "-n", "--directory", str(tmp_path),
                             "results/claims/distill.csv", "results/distill_table.csv"],
                            cwd=Path(__file__).resolve().parents[1], env=env, capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 0, (result.stdout + result.stderr)[-5000:]
    trained = sorted(tuple(re.search(r"wildcards: run=(\S+), seed=(\d+)", block).groups())
                     for block in result.stdout.split("\nrule ")[1:] if block.startswith("distill_student_train:"))
    runs = ["lc_soft_cca", "ls_cosine", "ls_cosine+lc_soft_cca"]
    assert trained == sorted([(run, seed) for run in runs for seed in ("13", "14", "15")]
                             + [("ls_cosine+lc_soft_cca_frozen", "13")])
