"""Data that drives the user's terminal: ``python -m multivec inspect`` never prints a data file's control
characters raw.

A document, an id, a file name, a table cell or a config value can hold escape sequences: ANSI CSI
(``ESC [ 2 J`` clears the screen), OSC 0 (sets the window title), OSC 52 (writes the clipboard), their
8-bit C1 forms (U+009B, U+009D), BEL, backspace and carriage return (which overwrite what was printed),
DEL, NUL, the bidirectional overrides and isolates that reorder a line (U+202A-U+202E, U+2066-U+2069,
U+200E/U+200F, U+061C), the line separators U+2028/U+2029 and U+0085, and lone surrogates (which the
terminal's encoding cannot print: a traceback instead of output). ``Report`` (multivec.inspection.common),
the one thing an inspector prints through, writes them as Python escapes (``\\x1b``, ``\\u202e``).

Every inspector is run on a sample whose text fields, keys, ids and file names carry all of these, and the
output must hold no control character but the newlines between lines, while still showing the text around
them (so the data was printed, escaped, and not dropped). The command line's error line, which may quote a
data file, is checked too, and a real ``python -m multivec inspect`` on a folder with such file names.
"""

from __future__ import annotations

import ast
import bz2
import csv
import io
import json
import os
import subprocess
import sys
import unicodedata
import zipfile
from pathlib import Path

import numpy as np
import pytest

from multivec.inspection.registry import INSPECTOR_MODULES, detect, inspect_path, inspectors
from multivec.io import write_json, write_jsonl

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"

MARK = "pwned"  # printable text inside the hostile sequences: it must show up, escaped around
# Every family member, in one string a sample puts in each text field it has.
HOSTILE = ("\x1b[2J\x1b[H"  # CSI: clear the screen, cursor home
           f"\x1b]0;{MARK} title\x07"  # OSC 0: set the window title (BEL-terminated)
           "\x1b]52;c;cHduZWQ=\x1b\\"  # OSC 52: write the clipboard (ST-terminated)
           "\x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\"  # OSC 8: a hidden hyperlink
           "\x9b31m\x9d0;c1 title\x9c\x90dcs\x9c"  # C1 controls: 8-bit CSI, OSC, ST, DCS
           " bel\x07 bs\x08\x08 cr\rover del\x7f nul\x00 vt\x0b ff\x0c fs\x1c nel\x85 "
           "ls\u2028 ps\u2029 \u202eoverride\u202c \u202aembed\u202c \u2066isolate\u2069 \u2067\u2068x\u2069"
           " \u200frlm\u200e alm\u061c tab\there")
# For an id or a name that must stay one token (no whitespace, no newline, no NUL, no tab).
HOSTILE_ID = f"d\x1b]0;{MARK}\x07\x1b[2J\x9b1m\u202e\x08\r"
HOSTILE_FILE = f"f\x1b]0;{MARK}-file\x07\x1b[2J\x9b1m\u202e\x08\r"  # a file name (no "/", no NUL)

BIDI_AND_SEPARATORS = set("\u061c\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def unsafe_characters(text: str) -> list[str]:
    """What a terminal must not receive raw (besides the newlines between lines): control characters
    (Cc: C0, DEL, C1), lone surrogates (Cs), bidirectional controls and line/paragraph separators."""
    found = {c for c in text if c != "\n" and (unicodedata.category(c) in ("Cc", "Cs") or c in BIDI_AND_SEPARATORS)}
    return sorted(f"U+{ord(c):04X}" for c in found)


def run(path: Path, n: int = 3) -> tuple[str, str]:
    out = io.StringIO()
    kind = inspect_path(path, n=n, out=out)
    return kind, out.getvalue()


# ---------------------------------------------------------------- hostile samples, one per inspector

def _csv(path: Path, rows: list[list]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)


def _weights(path: Path, names=("w",)) -> None:
    from safetensors.numpy import save_file

    save_file({name: np.zeros((2, 2), np.float32) for name in names}, str(path))


def _docs(path: Path, docs: dict[str, str]) -> None:  # raw, unlike write_docs_tsv (which folds whitespace)
    path.write_text("".join(f"{doc_id}\t{text}\n" for doc_id, text in docs.items()), encoding="utf-8")


def _task_file(path: Path) -> None:
    _docs(path.with_name("docs.txt"), {HOSTILE_ID: HOSTILE, "a": "an answer " + HOSTILE, "b": HOSTILE})
    write_jsonl(path, [{"source": HOSTILE_ID, "candidates": ["a", "b", "missing" + HOSTILE_ID], "answer": 0}])


def _task_folder(path: Path) -> None:
    path.mkdir()
    _task_file(path / "task.jsonl")


def _model(path: Path) -> None:
    path.mkdir()
    write_json(path / "config.json", {"model": {"objective": HOSTILE, HOSTILE_ID: 1}, "train": {"lr": HOSTILE},
                                      "note": HOSTILE})
    _weights(path / "model.safetensors")
    _weights(path / f"{HOSTILE_FILE}.safetensors")
    (path / HOSTILE_FILE).mkdir()
    (path / "backbone").mkdir()
    write_json(path / "backbone" / "config.json", {"model_type": HOSTILE, "hidden_size": 8})
    write_json(path / "training_summary.json", {HOSTILE_ID: HOSTILE, "best_step": 2})
    _csv(path / "metrics.csv", [["step", "train_loss", HOSTILE], [1, 2.0, HOSTILE], [2, 1.5, HOSTILE_ID]])
    _checkpoint(path / "checkpoint")


def _checkpoint(path: Path) -> None:
    step = path / "step_00000002"
    step.mkdir(parents=True)
    write_json(path / "latest.json", {"folder": "step_00000002"})
    write_json(step / "state.json", {"step": HOSTILE, "epoch": HOSTILE_ID, "best_step": 2, "elapsed_s": HOSTILE,
                                     "metrics": [{"step": 2, "note": HOSTILE}]})
    _weights(step / "model.safetensors", names=(HOSTILE_ID,))
    (step / HOSTILE_FILE).write_text("x")


def _tokenizer(path: Path) -> None:
    path.mkdir()
    write_json(path / "tokenizer_config.json", {"model_max_length": 8, "tokenizer_class": HOSTILE, HOSTILE_ID: 1})
    (path / HOSTILE_FILE).write_text("x")


def _model_config(path: Path) -> None:
    path.mkdir()
    write_json(path / "config.json", {"model_type": HOSTILE, "architectures": [HOSTILE], "hidden_size": 8,
                                      "nugget_ratio": HOSTILE})


def _frozen_bottom(path: Path) -> None:
    from safetensors.numpy import save_file

    path.mkdir()
    save_file({"states": np.zeros((3, 4), np.float32), "offsets": np.array([0, 3], np.int64)},
              str(path / "states.safetensors"))
    write_json(path / "info.json", {"documents": 1, "encoder": HOSTILE, "architecture": HOSTILE, "layer": HOSTILE,
                                    "max_tokens": HOSTILE, "dtype": HOSTILE, "token_ids_sha256": HOSTILE,
                                    "truncation": {"truncated_documents": HOSTILE, "tokens_lost_share": 0.0}})


def _encodings(path: Path) -> None:
    from multivec.encodings import write_encodings

    write_encodings(path, [HOSTILE_ID], [np.ones((2, 3))])
    write_jsonl(path / "documents.jsonl", [{"id": HOSTILE_ID, "nugget_tokens": [HOSTILE, "b"]}])
    write_json(path / "info.json", {"encoder": HOSTILE, "nested": {"k": HOSTILE}})


def _zip(path: Path) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"dir/{HOSTILE}.txt", "text")


def _image(path: Path) -> None:
    from PIL import Image

    Image.new("RGB", (4, 3)).save(path, format="PNG")


def _benchmark(path: Path) -> None:
    text = HOSTILE.replace("\t", " ").replace("\r", " ")  # pandas would split a row at CR (not this family)
    path.write_text(f"s\th:m:s\tmax_rss\t{HOSTILE_ID}\n1.5\t0:00:01\t{text}\t{HOSTILE_ID}\n", encoding="utf-8")


def _benchmarks_folder(path: Path) -> None:
    (path / HOSTILE_FILE).mkdir(parents=True)
    (path / HOSTILE_FILE / f"{HOSTILE_FILE}.tsv").write_text(
        "s\th:m:s\tmax_rss\tmax_vms\n1.5\t0:00:01\t100.0\t0\n", encoding="utf-8")


def _units(path: Path) -> None:
    from multivec.statistics import Measurement, write_units

    write_units(path, [Measurement("row " + HOSTILE, HOSTILE_ID, "mean", ["q0", "q1"], [50.0, 100.0])])


def _embeddings(path: Path) -> None:
    from multivec.distill.embeddings import write_embeddings

    write_embeddings(path, [HOSTILE_ID, "d1"], np.ones((2, 3)), {"model": HOSTILE, HOSTILE_ID: 1})


def _eval_task(path: Path) -> None:
    path.mkdir()
    write_jsonl(path / "labels.jsonl", [{"id": "d0", "label": HOSTILE}, {"id": "d1", "label": 1}])
    write_json(path.parent / "meta.json", {"builder": HOSTILE})
    path.with_name(path.name + ".jsonl").write_text("{}\n")


def _student(path: Path) -> None:
    path.mkdir()
    _weights(path / "model.safetensors")
    write_json(path / "config.json", {"model": {"student": {"backbone": HOSTILE, "max_tokens": HOSTILE},
                                                "loss": {"structural": HOSTILE, "combination": HOSTILE}},
                                      "derived": {"x": HOSTILE}})


def _paragraph_vector(path: Path) -> None:
    path.mkdir()
    (path / "part0.model").write_bytes(b"gensim")
    write_json(path / "variant.json", {"name": HOSTILE, "parts": [{"vector_size": 4, "name": HOSTILE}],
                                       "epochs": HOSTILE, "seed": HOSTILE_ID, "documents": HOSTILE})


def _folder(path: Path) -> None:
    path.mkdir()
    (path / HOSTILE_FILE).write_text("x")
    (path / f"{HOSTILE_FILE}.jsonl").write_text("not json\n")  # listed with its (quoted) error
    (path / f"{HOSTILE_FILE}-dir").mkdir()


def _training_rows(path: Path) -> None:
    sentence = "A b. " + HOSTILE
    write_jsonl(path, [{"id": HOSTILE_ID, "sentence": sentence, "pair_id": HOSTILE_ID, "propositions": [
        {"text": HOSTILE, "char_spans": [[0, 3], [5, len(sentence)]], "label": 0}]}])


def _segments(path: Path) -> None:
    sentence = "A b. " + HOSTILE
    write_jsonl(path, [{"id": HOSTILE_ID, "sentence": sentence, "segmenter": HOSTILE, "propositions": [
        {"text": HOSTILE, "char_spans": [[5, len(sentence)]]}]}])


# inspector name -> (file or folder name, builder). The name is where the inspector's matcher looks.
HOSTILE_SAMPLES = {
    "jsonl": ("rows.jsonl", lambda p: write_jsonl(p, [{"text": HOSTILE, HOSTILE_ID: HOSTILE, "n": 1},
                                                      {"text": "x " + HOSTILE}])),
    "corpus": ("train.jsonl", lambda p: write_jsonl(p, [{"id": HOSTILE_ID, "source": HOSTILE,
                                                         "target": HOSTILE + " x"}])),
    "documents tsv": ("docs.txt", lambda p: _docs(p, {HOSTILE_ID: HOSTILE, "L1": "", "L2": "ok " + HOSTILE})),
    "ranking task file": ("task.jsonl", _task_file),
    "ranking task": ("task", _task_folder),
    "text": ("notes.md", lambda p: p.write_text(f"{HOSTILE}\n\n{HOSTILE_ID} more\n", encoding="utf-8")),
    "rule log": ("rule.log", lambda p: p.write_text(
        f"INFO start {HOSTILE}\nWARNING {HOSTILE}\nTraceback {HOSTILE}\n{HOSTILE}\n", encoding="utf-8")),
    "csv table": ("metrics.csv", lambda p: _csv(p, [["name", HOSTILE, "v"], [HOSTILE, HOSTILE_ID, 1],
                                                    ["ok", "x", 2]])),
    "results table": ("table.csv", lambda p: _csv(p, [["model", "PI", "paper_PI"], [HOSTILE, 90.0, 96.7]])),
    "tsv": ("pairs.tsv", lambda p: p.write_text(f"{HOSTILE_ID}\tb {HOSTILE.replace(chr(9), ' ')}\tc\n{HOSTILE_ID}\te\n",
                                                encoding="utf-8")),
    "snakemake benchmark": ("job.tsv", _benchmark),
    "snakemake benchmarks folder": ("rules", _benchmarks_folder),
    "json": ("info.json", lambda p: write_json(p, {HOSTILE_ID: HOSTILE, "flat": {HOSTILE_ID: HOSTILE},
                                                   "list": [HOSTILE] * 6})),
    "ranking metrics": ("pi.json", lambda p: write_json(p, {"row": HOSTILE, "task": HOSTILE_ID, "method": HOSTILE,
                                                            "mrr": 50.0, "n_queries": 2, "extra": HOSTILE})),
    "rankings": ("pi.rankings.jsonl", lambda p: write_jsonl(p, [{"source": HOSTILE, "candidates": [HOSTILE, "b"],
                                                                 "scores": [1.0, 0.0], "answer": 0}])),
    "encodings": ("pi", _encodings),
    "model": ("seed0", _model),
    "checkpoint": ("checkpoint", _checkpoint),
    "tokenizer": ("tokenizer", _tokenizer),
    "model config": ("backbone", _model_config),
    "frozen bottom states": ("bottom", _frozen_bottom),
    "archive": ("wiki.zip", _zip),
    "compressed": ("dump.bz2", lambda p: p.write_bytes(bz2.compress(f"{HOSTILE}\n{HOSTILE}\n".encode()))),
    "safetensors": ("w.safetensors", lambda p: _weights(p, names=(HOSTILE_ID, HOSTILE, "b"))),
    "image": (f"{HOSTILE_FILE}.png", _image),
    "unit scores": ("units.parquet", _units),
    "subencoder sentence pairs": ("pairs.jsonl", lambda p: write_jsonl(p, [
        {"pair_id": HOSTILE_ID, "a": {"id": "a", "sentence": HOSTILE}, "b": {"id": "b", "sentence": HOSTILE}}])),
    "subencoder segments": ("segments.jsonl", _segments),
    "subencoder training rows": ("train_rows.jsonl", _training_rows),
    "distill embeddings": ("emb", _embeddings),
    "distill evaluation task": ("eval_x", _eval_task),
    "distill student": ("student", _student),
    "paragraph vector model": ("pv", _paragraph_vector),
    "folder": ("plain", _folder),
}


PRINTS_NO_TEXT = {"image"}  # sizes only; its file name is on the first line
# The family's members that no reader refuses as "not text" (the checked readers of multivec.io refuse C0
# controls, DEL and lone surrogates in files; C1 controls, bidi controls, separators, CR and tab are text).
SOFT = (f"\x9b2J\x9d0;{MARK} title\x9c \x90dcs\x9c cr\rover nel\x85 ls\u2028 ps\u2029 \u202eoverride\u202c "
        "\u2066isolate\u2069 \u200frlm\u200e alm\u061c tab\there")
SOFT_ID = f"d\x9d0;{MARK}\x9c\u202e\x9b1m"
# name -> (text fields, ids and keys). Ids are checked harder than text (docs.txt refuses invisible ones).
PAYLOADS = {"every_member": (HOSTILE, HOSTILE_ID), "c1_bidi_in_ids": (SOFT, SOFT_ID),
            "c1_bidi_in_text": (SOFT, "d-plain-id")}


def escaped(text: str) -> str:
    """The Python-style escape of every unsafe character (what inspect must print instead)."""
    return "".join({"\t": "\\t", "\n": "\\n", "\r": "\\r"}.get(c) or (
        (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}") if unsafe_characters(c) else c) for c in text)


def test_every_inspector_has_a_hostile_sample():
    missing = sorted(t.name for t in inspectors() if t.name not in HOSTILE_SAMPLES)
    assert not missing, f"add a sample carrying terminal escapes for {missing} to HOSTILE_SAMPLES"


@pytest.mark.parametrize("payload", sorted(PAYLOADS))
@pytest.mark.parametrize("name", sorted(HOSTILE_SAMPLES))
def test_inspect_prints_no_raw_control_characters(name, payload, tmp_path, monkeypatch, capsys):
    """``python -m multivec inspect`` on the sample: stdout and the error line (a reader may refuse a file
    as not text) hold no raw control character, and what the inspector shows of the data is escaped."""
    from multivec.__main__ import main

    monkeypatch.setitem(globals(), "HOSTILE", PAYLOADS[payload][0])  # the builders read these names
    monkeypatch.setitem(globals(), "HOSTILE_ID", PAYLOADS[payload][1])
    folder = tmp_path / f"dir\x1b]0;{MARK}-dir\x07\u202e"  # the path itself is printed on the first line
    folder.mkdir()
    file_name, build = HOSTILE_SAMPLES[name]
    path = folder / file_name
    build(path)
    if payload == "c1_bidi_in_text":  # every reader accepts the sample: it is recognised as its type
        assert detect(path).name == name
    status = main(["inspect", str(path)])
    out, err = capsys.readouterr()
    assert not unsafe_characters(out), (unsafe_characters(out), out)
    assert not unsafe_characters(err), (unsafe_characters(err), err)
    lines = out.splitlines()
    if lines:  # nothing when the reader that recognises the type refused the file
        assert lines[0].startswith(escaped(f"{path}: "))  # the path escaped, not dropped
    if status == 0:
        assert not err
        if name not in PRINTS_NO_TEXT:  # the inspector's lines show the data, escaped, not dropped
            assert MARK in "\n".join(lines[1:]), f"the sample's text is not shown at all:\n{out}"
    else:  # refused by a checked reader: one line naming the character (U+...), the file name escaped
        assert status == 1 and err.startswith("error: ") and "U+" in err and escaped(str(folder)) in err, err


def test_a_metadata_sidecar_is_printed_safely(tmp_path):
    path = tmp_path / "rows.jsonl"
    write_jsonl(path, [{"text": "a"}])
    write_json(path.with_name(path.name + ".meta.json"), {"note": SOFT, SOFT_ID: {"k": SOFT}, "list": [SOFT]})
    _, text = run(path)
    sidecar = text[text.index("metadata (rows.jsonl.meta.json)"):]
    assert MARK in sidecar and not unsafe_characters(text), text


def test_escapes_are_python_style_and_ordinary_text_is_unchanged():
    from multivec.inspection.common import terminal_safe

    assert terminal_safe("a\x1b[2Jb\x07\x9b\u202e\u2066\t\r\n\x00\x7f\ud800") == \
        "a\\x1b[2Jb\\x07\\x9b\\u202e\\u2066\\t\\r\\n\\x00\\x7f\\ud800"
    for ordinary in ("plain text", "C:\\path\\x1b (a literal backslash)", "你好。", "naïve café – “quotes” 😀",
                     "שלום עולם", "مرحبا", "zero\u200bwidth", "", "x = 1.5e-3 | y"):
        assert terminal_safe(ordinary) == ordinary


def test_tables_keep_their_columns_aligned_and_ordinary_tables_print_as_before():
    import pandas as pd

    from multivec.inspection.common import Report

    ordinary = pd.DataFrame({"model": ["NUGGET", "TSDAE"], "PI": [90.5, 80.25], "note": ["a b", None]})
    out = io.StringIO()
    Report(out).table(ordinary, index=False)
    assert out.getvalue() == ordinary.to_string(index=False) + "\n"

    hostile = pd.DataFrame({"col\x1b[2J": [f"a\x1b]0;{MARK}\x07", "b"], "n": [1, 2]})
    out = io.StringIO()
    Report(out).table(hostile, index=False)
    lines = out.getvalue().splitlines()
    assert not unsafe_characters(out.getvalue())
    assert len({len(line) for line in lines}) == 1, lines  # widths computed on the escaped text


def test_a_report_line_is_one_line_whatever_the_data():
    from multivec.inspection.common import Report

    out = io.StringIO()
    Report(out).line("id: fake\nerror: forged line\rX")
    assert out.getvalue() == "id: fake\\nerror: forged line\\rX\n"


@pytest.mark.parametrize("value", [f"step\x9d0;{MARK}\x9c\u202e\x9b2J", "step\ud800", f"step\x1b]0;{MARK}\x07"],
                         ids=["c1_bidi", "lone_surrogate", "esc"])
def test_the_error_line_quotes_data_safely(value, tmp_path, capsys):
    """An error names the file (its name may hold escapes) and may quote the value it found."""
    from multivec.__main__ import main

    checkpoint = tmp_path / f"run\x1b]0;{MARK}-dir\x07\u202e" / "checkpoint"
    checkpoint.mkdir(parents=True)
    (checkpoint / "latest.json").write_text(json.dumps({"folder": value}))  # ensure_ascii: any value fits
    (checkpoint / "state.json").write_text("{}")
    assert main(["inspect", str(checkpoint)]) == 1
    out, err = capsys.readouterr()
    assert err.startswith("error: ") and escaped(str(checkpoint)) in err, err
    assert not unsafe_characters(err) and not unsafe_characters(out), (err, out)


def test_the_command_line_prints_undecodable_and_hostile_file_names(tmp_path):
    """A real ``python -m multivec inspect``: a file name that is not UTF-8 (a lone surrogate in Python)
    used to end in a UnicodeEncodeError traceback; one with escapes used to reach the terminal raw."""
    folder = tmp_path / "names"
    folder.mkdir()
    (folder / os.fsdecode(b"bad\xff\x1b[2J.bin")).write_bytes(b"x")
    (folder / HOSTILE_FILE).write_text("x")
    (folder / "docs.txt").write_text(f"d0\t{SOFT}\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(SRC), PYTHONIOENCODING="utf-8")
    for target in (folder, folder / "docs.txt"):
        result = subprocess.run([sys.executable, "-m", "multivec", "inspect", str(target)], capture_output=True,
                                timeout=300, env=env)
        assert result.returncode == 0, result.stderr.decode(errors="replace")[-2000:]
        text = result.stdout.decode("utf-8")  # strict: nothing undecodable was written
        assert not unsafe_characters(text), text
        assert MARK in text
    assert "bad\\udcff\\x1b[2J.bin" in subprocess.run(
        [sys.executable, "-m", "multivec", "inspect", str(folder)], capture_output=True, timeout=300,
        env=env).stdout.decode("utf-8")


def _prints(module: str) -> list[str]:
    """Calls in ``module`` that write somewhere other than ``Report``: print(), .write(), sys.stdout/stderr."""
    path = SRC / (module.replace(".", "/") + ".py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            found.append(f"{path.name}:{node.lineno} print()")
        if isinstance(node, ast.Attribute) and node.attr in ("stdout", "stderr", "out", "write", "writelines"):
            found.append(f"{path.name}:{node.lineno} .{node.attr}")
    return found


def test_no_inspector_prints_except_through_report():
    """The one place inspect output is made safe is ``Report``; an inspector that printed by itself would
    bypass it."""
    offenders = [hit for module in INSPECTOR_MODULES for hit in _prints(module)]
    offenders += [hit for hit in _prints("multivec.inspection.registry") if not hit.endswith(" .stdout")]
    assert not offenders, offenders
    assert [hit for hit in _prints("multivec.inspection.registry") if hit.endswith(" .stdout")], \
        "inspect_path's default output (sys.stdout) moved: update this test"
    common = sorted(hit.split()[1] for hit in _prints("multivec.inspection.common"))
    assert common == [".out", "print()"], common  # Report.line's one print(..., file=self.out)
