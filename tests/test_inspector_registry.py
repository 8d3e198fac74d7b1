"""The inspector registry: every artifact the DAG writes has an inspector, registration does not
depend on import order, and unknown JSON/CSV outputs and metadata sidecars display generically."""

import bz2
import gzip
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest

from multivec.encodings import write_encodings
from multivec.inspection import registry
from multivec.inspection.kinds import ARTIFACT_KINDS, kind_of
from multivec.inspection.registry import INSPECTOR_MODULES, inspect_path, inspectors, matching
from multivec.io import write_docs_tsv, write_json, write_jsonl

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
BENCHMARK_HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def run(path, n=2):
    out = io.StringIO()
    kind = inspect_path(path, n=n, out=out)
    return kind, out.getvalue()


# ---------------------------------------------------------------- registration

def test_every_inspector_module_is_listed_and_registers_something():
    files = sorted(SRC.glob("multivec/**/inspector.py")) + sorted(SRC.glob("multivec/**/*_inspector.py"))
    on_disk = {".".join(f.relative_to(SRC).with_suffix("").parts) for f in files}
    unlisted = on_disk - set(INSPECTOR_MODULES)
    assert not unlisted, f"inspector files missing from INSPECTOR_MODULES: {unlisted}"
    by_module = {t.module for t in inspectors()}
    assert set(INSPECTOR_MODULES) == by_module, set(INSPECTOR_MODULES) ^ by_module


def test_registration_does_not_depend_on_import_order():
    here = sorted((t.name, t.priority, t.module) for t in inspectors())
    # A fresh interpreter that first imports one inspector module directly, then asks the registry.
    code = ("import multivec.evaluation.inspector, multivec.nugget.inspector\n"
            "from multivec.inspection.registry import inspectors\n"
            "import json; print(json.dumps(sorted((t.name, t.priority, t.module) for t in inspectors())))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, PYTHONPATH=str(SRC)))
    assert result.returncode == 0, result.stderr
    assert [tuple(x) for x in json.loads(result.stdout)] == here


def test_a_second_inspector_with_the_same_name_is_refused():
    with pytest.raises(ValueError, match="registered twice"):
        registry.inspector("corpus", "another corpus", lambda p: False)(lambda path, report: None)


def test_kind_patterns():
    assert kind_of("data/raw/nugget_pi/dev/docs.txt").inspector == "documents tsv"
    assert kind_of("data/raw/wikitext2/valid.txt").inspector == "text"
    assert kind_of("data/built/tasks/pi").inspector == "ranking task"
    assert kind_of("data/built/tasks/pi/").inspector == "ranking task"
    assert kind_of("results/table2/colbart/pi.rankings.jsonl").inspector == "rankings"
    assert kind_of("results/table2/colbart/pi.json").inspector == "ranking metrics"
    assert kind_of("results/table2.csv").inspector == "results table"
    assert kind_of("results/overlap.csv").inspector == "csv table"
    assert kind_of("data/built/tasks/pi/task.jsonl.meta.json").inspector == "json"
    assert kind_of("models/nugget/ae_r0.25/checkpoint").inspector == "checkpoint"
    assert kind_of("somewhere/else.bin") is None
    names = {t.name for t in inspectors()}
    assert {k.inspector for k in ARTIFACT_KINDS} <= names


# ---------------------------------------------------------------- the DAG's outputs are all covered

def _dag_outputs(tmp_path, *args):
    env = dict(os.environ, HF_HUB_OFFLINE="1", MULTIVEC_DATA_MIRROR="")
    result = subprocess.run([SNAKEMAKE, "--summary", "--directory", str(tmp_path), *args], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    lines = result.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("output_file\t"))
    return [line.split("\t")[0] for line in lines[start + 1:] if line.strip()]


def _rule_log_and_benchmark_paths():
    paths = []
    for smk in sorted((REPO / "rules").glob("*.smk")):
        for found in re.findall(r'"((?:logs|benchmarks)/[^"]+)"', smk.read_text(encoding="utf-8")):
            paths.append(re.sub(r"\{[^}]+\}", "x", found))
    return paths


def test_every_output_the_dag_writes_has_an_artifact_kind(tmp_path):
    outputs = set(_dag_outputs(tmp_path / "demo")) | set(_dag_outputs(tmp_path / "paper", "--configfile",
                                                                       "config/paper.yaml"))
    logs = _rule_log_and_benchmark_paths()
    assert any(p.startswith("results/table2") for p in outputs) and any(p.startswith("models/") for p in outputs)
    assert any(p.startswith("logs/") for p in logs) and any(p.startswith("benchmarks/") for p in logs)
    uncovered = sorted(p for p in outputs | set(logs) if kind_of(p) is None)
    assert not uncovered, f"add a line to ARTIFACT_KINDS (multivec/inspection/kinds.py) for: {uncovered}"


# ---------------------------------------------------------------- a sample of every kind is detected as it

def _zip_or_tar(path: Path) -> None:
    if path.suffix == ".zip":
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("wikitext-103-raw/wiki.valid.raw", " = Title = \n")
    else:
        with tarfile.open(path, "w:gz") as archive:
            data = b"a sentence\n"
            info = tarfile.TarInfo("dev/newsdev2017.en")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def _weights(path: Path) -> None:
    from safetensors.numpy import save_file

    save_file({"w": np.zeros((2, 2), np.float32)}, str(path))


def _task_folder(path: Path) -> None:
    write_docs_tsv(path / "docs.txt", {"q": "a query", "a": "an answer"})
    write_jsonl(path / "task.jsonl", [{"source": "q", "candidates": ["a"], "answer": 0}])


def _model(path: Path) -> None:
    path.mkdir(parents=True)
    write_json(path / "config.json", {"model": {"objective": "ae", "ratio": 0.25}})
    _weights(path / "model.safetensors")


def _checkpoint(path: Path) -> None:
    (path / "step_00000002").mkdir(parents=True)
    write_json(path / "latest.json", {"folder": "step_00000002"})
    write_json(path / "step_00000002" / "state.json", {"step": 2, "elapsed_s": 1.0})


def _image(path: Path) -> None:
    from PIL import Image

    Image.new("RGB", (4, 3)).save(path)


def _benchmark(path: Path) -> None:
    path.write_text(BENCHMARK_HEADER + "1.5\t0:00:01\t100.0\t0\t0\t0\t0\t0\t0\t0\n")


def _benchmarks_folder(path: Path) -> None:
    (path / "train").mkdir(parents=True)
    _benchmark(path / "train" / "a.tsv")


def _frozen_bottom(path):
    from multivec.nugget.configuration import NuggetConfig
    from multivec.nugget.frozen_bottom import write_bottom_states

    config = NuggetConfig(encoder="tiny-random-bert", scorer_layer=1, target_tokenizer="source")
    write_bottom_states(path, ["d0", "d1"], ["a document .", "another one ."], config, None)
def _distill_student(path: Path) -> None:
    path.mkdir(parents=True)
    _weights(path / "model.safetensors")
    write_json(path / "config.json", {"model": {"student": {"backbone": "minilm"}, "loss": {"structural": "mse"}}})


SAMPLES = {  # inspector name -> write a small artifact of that type at the path
    "documents tsv": lambda p: write_docs_tsv(p, {"L0": "a document", "L1": "another one"}),
    "ranking task file": lambda p: write_jsonl(p, [{"source": "L0", "candidates": ["L1"], "answer": 0}]),
    "jsonl": lambda p: write_jsonl(p, [{"doc": "d", "i": 0, "en": "Hello.", "zh": "你好。"}]),
    "json": lambda p: write_json(p, {"n_documents": 3}),
    "archive": _zip_or_tar,
    "compressed": lambda p: p.write_bytes((bz2.compress if p.suffix == ".bz2" else gzip.compress)(b"<page>\n")),
    "text": lambda p: p.write_text(" = Title = \n\n some text .\n", encoding="utf-8"),
    "tsv": lambda p: p.write_text("a .\tb .\tc .\nd .\te .\n", encoding="utf-8"),
    "corpus": lambda p: write_jsonl(p, [{"id": "d0", "source": "text .", "target": "text ."}]),
    "ranking task": _task_folder,
    "encodings": lambda p: write_encodings(p, ["d0"], [np.ones((2, 3))]),
    "frozen bottom states": _frozen_bottom,
    "model": _model,
    "safetensors": _weights,
    "checkpoint": _checkpoint,
    "csv table": lambda p: p.write_text("step,loss\n1,2.0\n", encoding="utf-8"),
    "rankings": lambda p: write_jsonl(p, [{"source": "q", "candidates": ["a", "b"], "scores": [1.0, 0.0],
                                           "answer": 0}]),
    "ranking metrics": lambda p: write_json(p, {"row": "r", "task": "pi", "method": "cosine", "mrr": 50.0,
                                                "n_queries": 2}),
    "results table": lambda p: p.write_text("model,PI,paper_PI\nNUGGET,90.0,96.69\n", encoding="utf-8"),
    "image": _image,
    "rule log": lambda p: p.write_text("2026-01-01 00:00:00 INFO multivec.rule: done in 1.0 s\n", encoding="utf-8"),
    "snakemake benchmark": _benchmark,
    "snakemake benchmarks folder": _benchmarks_folder,
    "subencoder sentence pairs": lambda p: write_jsonl(p, [{"pair_id": "p0", "a": {"id": "a", "sentence": "A b."},
                                                            "b": {"id": "b", "sentence": "A c."}}]),
    "subencoder segments": lambda p: write_jsonl(p, [{"id": "a", "sentence": "A b.",
                                                      "propositions": [{"text": "A b", "char_spans": [[0, 3]]}]}]),
    "subencoder training rows": lambda p: write_jsonl(p, [{"id": "p0:a", "sentence": "A b.", "pair_id": "p0",
                                                           "propositions": [{"text": "A b", "char_spans": [[0, 3]],
                                                                             "label": 0}]}]),
    "distill embeddings": lambda p: __import__("multivec.distill.embeddings", fromlist=["x"]).write_embeddings(
        p, ["d0"], np.ones((1, 3)), {"model": "m"}),
    "distill evaluation task": lambda p: (p.mkdir(parents=True), write_jsonl(p / "labels.jsonl",
                                                                             [{"id": "d0", "label": 1}])),
    "distill student": _distill_student,
    "unit scores": lambda p: __import__("multivec.statistics", fromlist=["x"]).write_units(
        p, [__import__("multivec.statistics", fromlist=["x"]).Measurement("r", "PI", "mean", ["q0", "q1"], [50.0, 100.0])]),
    "paragraph vector model": lambda p: (p.mkdir(parents=True), (p / "part0.model").write_bytes(b"gensim"),
                                         write_json(p / "variant.json", {"name": "v", "parts": [{"vector_size": 4}]})),
}


@pytest.mark.parametrize("kind", ARTIFACT_KINDS, ids=lambda k: k.pattern)
def test_a_sample_of_every_kind_is_detected_as_its_inspector(kind, tmp_path):
    assert kind.inspector in SAMPLES, f"add a sample builder for {kind.inspector!r} to SAMPLES in this test"
    path = tmp_path / kind.pattern.replace("**/", "sub/dir/").replace("*", "x")
    path.parent.mkdir(parents=True, exist_ok=True)
    SAMPLES[kind.inspector](path)
    assert kind_of(kind.pattern.replace("**/", "sub/dir/").replace("*", "x")) == kind
    found = matching(path)
    assert found[0].name == kind.inspector, [t.name for t in found]
    # The winner is never a tie: two inspectors recognising the same path need different priorities.
    assert len(found) == 1 or found[1].priority < found[0].priority, [(t.name, t.priority) for t in found]
    kind_name, text = run(path)
    assert kind_name == kind.inspector and text.startswith(f"{path}: {kind.inspector} (")


# ---------------------------------------------------------------- unknown JSON/CSV and sidecars

def test_unknown_json_and_csv_outputs_display_generically(tmp_path):
    overlap = tmp_path / "results" / "overlap.csv"
    overlap.parent.mkdir()
    overlap.write_text("corpus,task,docs_with_overlap,max_share,threshold,pass\n"
                       "autoencoding,rr,0.0,0.0,0.05,True\ntranslation,pi,0.01,0.02,0.05,True\n")
    kind, text = run(overlap)
    assert kind == "csv table" and "shape: 2 rows x 6 columns" in text and "max_share (float64)" in text
    assert "translation" in text
    meta = tmp_path / "train.jsonl.meta.json"
    write_json(meta, {"input": {"lines": 2616, "skipped_empty": 3}, "output": {"documents": 680},
                      "truncation": {"max_tokens": 256, "truncated": 12}, "sources": ["a", "b", "c", "d", "e", "f"]})
    kind, text = run(meta)
    assert kind == "json" and "object with 4 keys" in text
    assert "  input: lines=2616, skipped_empty=3" in text and "  truncation: max_tokens=256, truncated=12" in text
    assert '  sources: list of 6 (str): ["a", "b", "c", "d", "e"]' in text


def test_metadata_sidecars_are_shown_with_their_artifact(tmp_path):
    corpus = tmp_path / "train.jsonl"
    write_jsonl(corpus, [{"id": "d0", "source": "a b", "target": "a b"}])
    write_json(tmp_path / "train.jsonl.meta.json", {"counts": {"input_lines": 5, "documents": 1}})
    kind, text = run(corpus)
    assert kind == "corpus" and "metadata (train.jsonl.meta.json):\n  counts: input_lines=5, documents=1" in text
    folder = tmp_path / "task"
    _task_folder(folder)
    write_json(folder / "meta.json", {"queries": 1, "min_queries": 1})
    kind, text = run(folder)
    assert kind == "ranking task" and "metadata (meta.json):\n  queries: 1\n  min_queries: 1" in text


def test_any_other_folder_lists_what_is_in_it(tmp_path):
    _task_folder(tmp_path / "tasks" / "pi")
    write_jsonl(tmp_path / "tasks" / "train.jsonl", [{"id": "d0", "source": "a", "target": "a"}])
    kind, text = run(tmp_path / "tasks")
    assert kind == "folder" and "entries: 2 (1 files, 1 folders)" in text
    assert "  pi/: ranking task (2 entries)" in text and "  train.jsonl: corpus (" in text
    # A benchmarks folder is one holding only benchmarks: a checkout holding benchmarks/rules is just a folder.
    _benchmarks_folder(tmp_path / "benchmarks" / "rules")
    (tmp_path / "benchmarks" / "bm25_speed.py").write_text("print()\n")
    (tmp_path / "notes.txt").write_bytes(b"\xff\xfe not utf-8\n")
    kind, text = run(tmp_path / "benchmarks")
    assert kind == "folder" and "  rules/: snakemake benchmarks folder (1 entries)" in text
    kind, text = run(tmp_path / "benchmarks" / ".")
    assert kind == "folder"
    kind, text = run(tmp_path)
    assert kind == "folder" and f"  notes.txt: unreadable: {tmp_path / 'notes.txt'}:1: not valid UTF-8" in text


def test_new_artifact_types_and_logs(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("2026-01-01 00:00:00 INFO multivec.rule: step 1\n"
                   "2026-01-01 00:00:01 WARNING multivec.io: skipped 2 empty documents\n"
                   "2026-01-01 00:00:02 ERROR multivec.rule: failed after 2.5 s\n"
                   "Traceback (most recent call last):\n", encoding="utf-8")
    kind, text = run(log)
    assert kind == "rule log" and "ERROR: 1  INFO: 1  WARNING: 1" in text and "outcome: FAILED after 2.5 s" in text
    assert "contains a traceback" in text and "! 2026-01-01 00:00:01 WARNING multivec.io: skipped 2" in text
    table = tmp_path / "table2.csv"
    table.write_text("model,PI,RR,paper_PI,paper_RR\nA,90.0,70.0,96.69,50.04\nB,80.0,60.0,,\n")
    kind, text = run(table)
    assert kind == "results table"
    assert "ours - paper on PI: 1 rows with a paper number; difference min=-6.69 mean=-6.69 max=-6.69" in text
    archive = tmp_path / "dev.tgz"
    _zip_or_tar(archive)
    kind, text = run(archive)
    assert kind == "archive" and "members: 1 files, 11 bytes uncompressed" in text and "dev/newsdev2017.en" in text
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK not really")
    with pytest.raises(Exception, match=rf"{re.escape(str(broken))}: not a readable archive"):
        run(broken)


def test_nugget_model_folder_shows_its_nugget_settings_and_backbone(tmp_path):
    folder = tmp_path / "ae_r0.25"
    _model(folder)
    write_json(folder / "backbone" / "config.json", {"model_type": "bert", "hidden_size": 384,
                                                     "num_hidden_layers": 6})
    _checkpoint(folder / "checkpoint")
    kind, text = run(folder)
    assert kind == "model" and "hyperparameters:\n  backbone: model_type=bert, hidden_size=384, " \
                               "num_hidden_layers=6\n  model: objective=ae, ratio=0.25\n" in text
    assert "folders: backbone, checkpoint" in text and "checkpoint: step 2 (resumable)" in text
