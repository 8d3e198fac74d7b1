"""The distillation table (Burian 2023): teacher concatenation, rows × tasks through an evaluator, dimension
and training minutes, the hypothesis lines, and a smoke-scale end-to-end from training to the table."""

import csv
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from multivec.distill.distill_table import build_rows, concatenate_embeddings, hypothesis_lines, write_table
from multivec.distill.student import StudentConfig
from multivec.distill.training import LossConfig, embed_documents, train
from multivec.io import write_json, write_jsonl
from multivec.training import TrainConfig

FIXTURES = Path(__file__).parent / "fixtures"
_spec = importlib.util.spec_from_file_location("distill_embeddings_stub", FIXTURES / "distill_embeddings_stub.py")
_stub = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_stub)
embeddings = _stub.ensure_embeddings_module()


def mean_pair_cosine(task, folder, task_files):
    """A real, simple evaluator for the tests: cosine of the folder's first two documents, and its count."""
    ids, vectors, _ = embeddings.read_embeddings(folder)
    a, b = vectors[0], vectors[1]
    return {"cos01": float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)), "n": float(len(ids))}


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


def _rows(tmp_path):
    rng = np.random.default_rng(0)
    rows = []
    for name, kind, dim, loss in [("sbert", "structural_teacher", 4, ""), ("pv", "contextual_teacher", 3, ""),
                                  ("student_both", "student", 4, "cosine+soft_cca")]:
        folders = {}
        for task in ("lee", "pi"):
            folders[task] = tmp_path / name / task
            embeddings.write_embeddings(folders[task], ["d0", "d1", "d2"], rng.normal(size=(3, dim)), {"model": name})
        row = {"name": name, "kind": kind, "embeddings": folders, "loss": loss}
        if kind == "student":
            write_json(tmp_path / name / "training_summary.json", {"train_minutes": 1.234})
            row["summary"] = tmp_path / name / "training_summary.json"
        rows.append(row)
    return rows


def test_rows_carry_every_task_metric_dimension_and_minutes(tmp_path):
    rows = _rows(tmp_path)
    table = build_rows(rows, ["lee", "pi"], {"lee": {}, "pi": {}}, evaluate=mean_pair_cosine)
    assert [r["row"] for r in table] == ["sbert", "pv", "student_both"]
    assert [r["dimension"] for r in table] == [4, 3, 4]
    assert [r["train_minutes"] for r in table] == ["", "", 1.23]
    expected = mean_pair_cosine("lee", rows[1]["embeddings"]["lee"], {})["cos01"]
    assert table[1]["lee_cos01"] == pytest.approx(expected, abs=1e-4) and table[1]["pi_n"] == 3
    write_table(table, tmp_path / "t.csv", tmp_path / "t.md", note="demo")
    with open(tmp_path / "t.csv") as handle:
        assert [r["row"] for r in csv.DictReader(handle)] == ["sbert", "pv", "student_both"]
    text = (tmp_path / "t.md").read_text()
    assert "| sbert | structural_teacher |" in text and "hypothesis" in text


def test_hypothesis_lines_count_wins_per_teacher():
    table = [{"row": "s", "kind": "structural_teacher", "loss": "", "a": 0.5, "b": 0.5},
             {"row": "c", "kind": "contextual_teacher", "loss": "", "a": 0.2, "b": 0.9},
             {"row": "both", "kind": "student", "loss": "cosine+soft_cca", "a": 0.6, "b": 0.6}]
    lines = hypothesis_lines(table)
    assert "beats the structural teacher (`s`) on 2 of 2 metrics" in lines[0]
    assert "beats the contextual teacher (`c`) on 1 of 2 metrics (a)" in lines[1]
    assert lines[2].endswith("**no**")
    table[1]["b"] = 0.1
    assert hypothesis_lines(table)[2].endswith("**yes**")


def test_missing_task_embeddings_name_the_row(tmp_path):
    rows = _rows(tmp_path)
    del rows[0]["embeddings"]["pi"]
    with pytest.raises(KeyError, match="sbert"):
        build_rows(rows, ["lee", "pi"], {"lee": {}, "pi": {}}, evaluate=mean_pair_cosine)


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
    assert meta["dimension"] == 16 and meta["n"] == 5
    untrained = embed_documents(tmp_path / "eval_lee.jsonl", tmp_path / "untrained_eval", student_config=student)
    assert untrained["dimension"] == 32  # the tiny backbone's hidden size, no head
    concatenate_embeddings([tmp_path / "structural" / "eval_lee", tmp_path / "contextual" / "eval_lee"],
                           tmp_path / "concat_eval")
    rows = [{"name": "sbert", "kind": "structural_teacher", "embeddings": {"lee": tmp_path / "structural" / "eval_lee"}},
            {"name": "pv", "kind": "contextual_teacher", "embeddings": {"lee": tmp_path / "contextual" / "eval_lee"}},
            {"name": "both_teachers", "kind": "teachers_concatenated", "embeddings": {"lee": tmp_path / "concat_eval"}},
            {"name": "untrained", "kind": "untrained_student", "embeddings": {"lee": tmp_path / "untrained_eval"}},
            {"name": "student", "kind": "student", "loss": "cosine+soft_cca", "summary": tmp_path / "model" /
             "training_summary.json", "embeddings": {"lee": tmp_path / "student_eval"}}]
    table = build_rows(rows, ["lee"], {"lee": {}}, evaluate=mean_pair_cosine)
    assert [r["dimension"] for r in table] == [16, 6, 22, 32, 16]
    assert table[-1]["train_minutes"] != "" and all(-1 <= r["lee_cos01"] <= 1 for r in table)
    write_table(table, tmp_path / "distill_table.csv", tmp_path / "distill_table.md")
    assert "`student` beats" in (tmp_path / "distill_table.md").read_text()
