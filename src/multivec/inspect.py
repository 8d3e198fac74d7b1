"""``python -m multivec inspect PATH``: say what a pipeline artifact is and show what is in it.

Every artifact type the pipeline writes has an entry in ``ARTIFACT_TYPES``: a predicate
that recognises it from its path (a file's name/extension and first line, a folder's
files) and an inspector that prints its kind, row count and schema, summary statistics
and a few samples. The first matching entry wins, so more specific types come first; a
new artifact type is one more ``register(...)`` call. Anything unrecognised raises
``InspectError`` listing the supported types.

Also here: ``length_summary`` and ``text_field_stats``, the token-length statistics of
JSONL text fields (whitespace tokens, and subwords when a tokenizer is given).
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, TextIO

import numpy as np

from multivec.io import MalformedInputError, iter_lines, read_docs_tsv, read_json, read_jsonl
from multivec.metrics.ranking import ranks_of_answers


class InspectError(ValueError):
    """The path is not an artifact ``inspect`` knows, or cannot be read as one."""


# ---------------------------------------------------------------- statistics

def length_summary(values: Sequence[float]) -> dict[str, float]:
    """``n``, ``min``, ``mean``, ``median``, ``p95`` (nearest rank) and ``max`` of some numbers."""
    if not values:
        return {"n": 0, "min": 0, "mean": 0.0, "median": 0.0, "p95": 0, "max": 0}
    ordered = sorted(values)
    p95 = ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]
    return {"n": len(ordered), "min": ordered[0], "mean": round(statistics.fmean(ordered), 2),
            "median": statistics.median(ordered), "p95": p95, "max": ordered[-1]}


def format_summary(summary: dict[str, float]) -> str:
    return "  ".join(f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}"
                     for key, value in summary.items())


def text_field_stats(rows: Sequence[dict[str, Any]], fields: Iterable[str] | None = None,
                     tokenizer=None) -> dict[str, dict[str, dict[str, float]]]:
    """Token-length statistics of the string fields of JSONL rows.

    Returns ``{field: {"whitespace_tokens": summary, "characters": summary[, "subwords": summary]}}``;
    ``fields`` defaults to every field that is a string in the first row (``id`` excluded).
    Subwords are counted with ``tokenizer`` (no special tokens) when one is given.
    """
    if fields is None:
        fields = [k for k, v in (rows[0] if rows else {}).items() if isinstance(v, str) and k != "id"]
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name in fields:
        texts = [row[name] for row in rows if isinstance(row.get(name), str)]
        stats = {"whitespace_tokens": length_summary([len(t.split()) for t in texts]),
                 "characters": length_summary([len(t) for t in texts])}
        if tokenizer is not None and texts:
            ids = tokenizer(texts, add_special_tokens=False)["input_ids"]
            stats["subwords"] = length_summary([len(x) for x in ids])
        out[name] = stats
    return out


# ---------------------------------------------------------------- helpers

def _short(text: Any, limit: int = 240) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _first_row(path: Path) -> dict[str, Any] | None:
    """The first non-blank JSONL row of ``path`` (None when it is not a JSON object)."""
    for number, text in iter_lines(path):
        if text.strip():
            try:
                row = json.loads(text)
            except json.JSONDecodeError:
                return None
            return row if isinstance(row, dict) else None
    return None


def _schema(rows: Sequence[dict[str, Any]]) -> str:
    keys: dict[str, set[str]] = {}
    counts: dict[str, int] = {}
    for row in rows:
        for key, value in row.items():
            keys.setdefault(key, set()).add(type(value).__name__)
            counts[key] = counts.get(key, 0) + 1
    parts = []
    for key, types in keys.items():
        part = f"{key}: {'|'.join(sorted(types))}"
        if counts[key] != len(rows):
            part += f" (in {counts[key]} of {len(rows)} rows)"
        parts.append(part)
    return ", ".join(parts)


def _print_field_stats(stats: dict[str, dict[str, dict[str, float]]], out: TextIO) -> None:
    for name, per_unit in stats.items():
        for unit, summary in per_unit.items():
            print(f"  {name} {unit}: {format_summary(summary)}", file=out)


_CJK = re.compile(r"[\u4e00-\u9fff]")


def _load_tokenizer(ref: str | None):
    if not ref:
        return None
    from multivec.resources import load_tokenizer

    return load_tokenizer(ref)


# ---------------------------------------------------------------- registry

@dataclass(frozen=True)
class ArtifactType:
    name: str
    description: str
    matches: Callable[[Path], bool]
    inspect: Callable[..., None]  # (path, n, out, tokenizer) -> None


ARTIFACT_TYPES: list[ArtifactType] = []


def register(name: str, description: str, matches: Callable[[Path], bool]):
    """Decorator adding an inspector to ``ARTIFACT_TYPES`` (checked in registration order)."""

    def wrap(function):
        ARTIFACT_TYPES.append(ArtifactType(name, description, matches, function))
        return function

    return wrap


def supported_types() -> str:
    return "\n".join(f"  - {t.name}: {t.description}" for t in ARTIFACT_TYPES)


def detect(path: str | os.PathLike) -> ArtifactType:
    path = Path(path)
    if not path.exists():
        raise InspectError(f"{path}: no such file or folder")
    for artifact in ARTIFACT_TYPES:
        if artifact.matches(path):
            return artifact
    raise InspectError(f"{path}: not an artifact that inspect knows. Supported:\n{supported_types()}")


def inspect_path(path: str | os.PathLike, n: int = 3, out: TextIO | None = None, tokenizer: str | None = None) -> str:
    """Print a summary of the artifact at ``path``; returns its type name."""
    out = out or sys.stdout
    path = Path(path)
    artifact = detect(path)
    print(f"{path}: {artifact.name} ({artifact.description})", file=out)
    artifact.inspect(path, n, out, tokenizer)
    return artifact.name


def _is_dir_with(*names: str) -> Callable[[Path], bool]:
    return lambda p: p.is_dir() and all((p / name).is_file() for name in names)


def _jsonl_first_row_has(*keys: str, without: Sequence[str] = ()) -> Callable[[Path], bool]:
    def matches(path: Path) -> bool:
        if not (path.is_file() and path.suffix == ".jsonl"):
            return False
        row = _first_row(path)
        return row is not None and all(k in row for k in keys) and not any(k in row for k in without)

    return matches


# ---------------------------------------------------------------- encodings folder

@register("encodings", "per-document vector sets: vectors.safetensors + documents.jsonl + info.json",
          _is_dir_with("vectors.safetensors", "documents.jsonl"))
def inspect_encodings(path: Path, n: int, out: TextIO, tokenizer: str | None = None) -> None:
    from safetensors import safe_open

    with safe_open(str(path / "vectors.safetensors"), "np") as tensors:
        offsets = tensors.get_tensor("offsets")
        shape = tensors.get_slice("vectors").get_shape()
        dtype = tensors.get_slice("vectors").get_dtype()
    documents = read_jsonl(path / "documents.jsonl")
    info = read_json(path / "info.json") if (path / "info.json").is_file() else {}
    if len(documents) + 1 != len(offsets):
        raise MalformedInputError(path / "documents.jsonl", None,
                                  f"{len(documents)} rows but vectors.safetensors has {len(offsets) - 1} documents")
    per_doc = [int(offsets[i + 1] - offsets[i]) for i in range(len(documents))]
    print(f"documents: {len(documents)}  vectors: {shape[0]} x {shape[1] if len(shape) > 1 else 0} ({dtype})", file=out)
    print(f"vectors per document: {format_summary(length_summary(per_doc))}", file=out)
    if info:
        print("info: " + ", ".join(f"{k}={v}" for k, v in info.items()), file=out)
    print(f"documents.jsonl schema: {_schema(documents)}", file=out)
    for row, count in list(zip(documents, per_doc))[:n]:
        line = f"  {row.get('id')}: {count} vectors"
        if "nugget_tokens" in row:
            line += f"; nugget tokens: {_short(' '.join(map(str, row['nugget_tokens'])), 300)}"
        print(line, file=out)


# ---------------------------------------------------------------- model folder

HYPERPARAMETER_KEYS = ("model_type", "architectures", "hidden_size", "d_model", "num_hidden_layers",
                       "encoder_layers", "decoder_layers", "num_attention_heads", "encoder_attention_heads",
                       "intermediate_size", "vocab_size", "max_position_embeddings")
_PROJECT_KEY = re.compile(r"nugget|ratio|scorer|objective|selector|feedback|residual|encoder|decoder|base")


def _parameter_count(files: Iterable[Path]) -> tuple[int, int]:
    from safetensors import safe_open

    total = tensors = 0
    for file in files:
        with safe_open(str(file), "np") as handle:
            for key in handle.keys():
                total += math.prod(handle.get_slice(key).get_shape())
                tensors += 1
    return total, tensors


@register("model", "a trained model: config.json + model.safetensors [+ training_summary.json, metrics.csv]",
          lambda p: p.is_dir() and (p / "config.json").is_file() and any(p.glob("*.safetensors")))
def inspect_model(path: Path, n: int, out: TextIO, tokenizer: str | None = None) -> None:
    config = read_json(path / "config.json")
    weights = sorted(path.glob("*.safetensors"))
    parameters, tensors = _parameter_count(weights)
    print(f"parameters: {parameters:,} in {tensors} tensors ({', '.join(w.name for w in weights)})", file=out)
    shown = {k: config[k] for k in HYPERPARAMETER_KEYS if k in config}
    shown.update({k: v for k, v in config.items()
                  if k not in shown and _PROJECT_KEY.search(k) and not isinstance(v, (dict, list))})
    print("hyperparameters: " + ", ".join(f"{k}={v}" for k, v in shown.items()), file=out)
    if (path / "training_summary.json").is_file():
        summary = read_json(path / "training_summary.json")
        print("training summary:", file=out)
        for key, value in (summary.items() if isinstance(summary, dict) else [("value", summary)]):
            print(f"  {key}: {_short(json.dumps(value, ensure_ascii=False), 200)}", file=out)
    if (path / "metrics.csv").is_file():
        table = _read_table(path / "metrics.csv", ",")
        print(f"metrics.csv: {table.shape[0]} rows x {table.shape[1]} columns; last {n}:", file=out)
        print(table.tail(n).to_string(index=False), file=out)


# ---------------------------------------------------------------- ranking task and rankings

def _read_docs(path: Path, out: TextIO) -> dict[str, str]:
    """docs.txt with empty documents skipped; the count is printed (the released PI sets have a few)."""
    docs = read_docs_tsv(path, on_empty="skip")
    lines = sum(1 for _, text in iter_lines(path) if text.strip())
    if lines != len(docs):
        print(f"note: {lines - len(docs)} empty documents in {path.name} (skipped)", file=out)
    return docs


def _print_task(tasks: list[dict], docs: dict[str, str] | None, n: int, out: TextIO, label: str) -> None:
    for number, row in enumerate(tasks, start=1):
        for key in ("source", "candidates", "answer"):
            if key not in row:
                raise MalformedInputError(label, number, f"task row lacks {key!r}")
    print(f"queries: {len(tasks)}", file=out)
    print(f"candidates per query: {format_summary(length_summary([len(r['candidates']) for r in tasks]))}", file=out)
    if docs is None:
        return
    print(f"documents: {len(docs)}", file=out)
    print(f"document length (whitespace tokens): {format_summary(length_summary([len(t.split()) for t in docs.values()]))}",
          file=out)
    referenced = {r["source"] for r in tasks} | {c for r in tasks for c in r["candidates"]}
    missing = referenced - docs.keys()
    if missing:
        print(f"WARNING: {len(missing)} ids in task.jsonl are not in docs.txt, e.g. {sorted(missing)[:3]}", file=out)
    for row in tasks[:n]:
        answer = row["candidates"][row["answer"]]
        negative = next((c for c in row["candidates"] if c != answer), None)
        print(f"  query {row['source']}: {_short(docs.get(row['source'], '?'))}", file=out)
        print(f"    answer {answer}: {_short(docs.get(answer, '?'))}", file=out)
        if negative is not None:
            print(f"    negative {negative}: {_short(docs.get(negative, '?'))}", file=out)


@register("ranking task", "a folder with docs.txt (id<TAB>text) + task.jsonl (source, candidates, answer)",
          _is_dir_with("task.jsonl"))
def inspect_task_folder(path: Path, n: int, out: TextIO, tokenizer: str | None = None) -> None:
    docs = _read_docs(path / "docs.txt", out) if (path / "docs.txt").is_file() else None
    if docs is None:
        print("docs.txt: absent (task ids only)", file=out)
    _print_task(read_jsonl(path / "task.jsonl"), docs, n, out, str(path / "task.jsonl"))


@register("rankings", "per-query JSONL: source, candidates, scores, answer, predicted, rank_of_answer",
          _jsonl_first_row_has("candidates", "scores"))
def inspect_rankings(path: Path, n: int, out: TextIO, tokenizer: str | None = None) -> None:
    rows = read_jsonl(path)
    ranks = []
    for number, row in enumerate(rows, start=1):
        for key in ("candidates", "scores", "answer"):
            if key not in row:
                raise MalformedInputError(path, number, f"rankings row lacks {key!r}")
        if len(row["scores"]) != len(row["candidates"]):
            raise MalformedInputError(path, number, f"{len(row['scores'])} scores for {len(row['candidates'])} candidates")
        # The project's one rank definition (ties count against the answer), as the tables use.
        ranks.append(int(ranks_of_answers(np.asarray([row["scores"]], dtype=float), np.asarray([row["answer"]]))[0]))
    mrr = statistics.fmean(1 / r for r in ranks) if ranks else 0.0
    top1 = sum(r == 1 for r in ranks) / len(ranks) if ranks else 0.0
    print(f"queries: {len(rows)}  schema: {_schema(rows)}", file=out)
    print(f"MRR: {100 * mrr:.2f}  accuracy@1: {100 * top1:.2f}", file=out)
    stored = [r["rank_of_answer"] for r in rows if "rank_of_answer" in r]
    if stored and len(stored) == len(rows):
        print(f"rank of answer: {format_summary(length_summary(stored))}", file=out)
    for row, rank in list(zip(rows, ranks))[:n]:
        winner = max(range(len(row["scores"])), key=row["scores"].__getitem__)
        answer = row["answer"]
        print(f"  query {row.get('source')}: answer {row['candidates'][answer]} (score {row['scores'][answer]:.4f}, "
              f"rank {rank}); winner {row['candidates'][winner]} (score {row['scores'][winner]:.4f})"
              + (" = answer" if winner == answer else ""), file=out)


@register("ranking task file", "task.jsonl rows: source, candidates, answer (docs.txt beside it is used if present)",
          _jsonl_first_row_has("source", "candidates", "answer", without=("scores",)))
def inspect_task_file(path: Path, n: int, out: TextIO, tokenizer: str | None = None) -> None:
    docs_path = path.with_name("docs.txt")
    docs = _read_docs(docs_path, out) if docs_path.is_file() else None
    _print_task(read_jsonl(path), docs, n, out, str(path))


# ---------------------------------------------------------------- JSONL corpora and other JSONL

@register("corpus", "JSONL documents: id, source, target (autoencoding or translation)",
          _jsonl_first_row_has("id", "source", "target"))
def inspect_corpus(path: Path, n: int, out: TextIO, tokenizer: str | None = None) -> None:
    rows = read_jsonl(path)
    for number, row in enumerate(rows, start=1):
        for key in ("id", "source", "target"):
            if not isinstance(row.get(key), str):
                raise MalformedInputError(path, number, f"corpus row lacks a string {key!r}")
    same = sum(r["source"] == r["target"] for r in rows)
    if rows and same == len(rows):
        kind = "autoencoding (target == source)"
    elif any(_CJK.search(r["target"]) for r in rows[:50]):
        kind = "translation (English -> Chinese)"
    else:
        kind = "sequence-to-sequence"
    print(f"rows: {len(rows)}  kind: {kind}", file=out)
    print(f"schema: {_schema(rows)}", file=out)
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        print(f"WARNING: {len(ids) - len(set(ids))} duplicate ids", file=out)
    print("lengths:", file=out)
    _print_field_stats(text_field_stats(rows, ["source", "target"], _load_tokenizer(tokenizer)), out)
    for row in rows[:n]:
        print(f"  {row['id']}", file=out)
        print(f"    source: {_short(row['source'])}", file=out)
        if row["target"] != row["source"]:
            print(f"    target: {_short(row['target'])}", file=out)


@register("jsonl", "any other JSONL file: row count, schema, text-field lengths", lambda p: p.is_file() and p.suffix == ".jsonl")
def inspect_jsonl(path: Path, n: int, out: TextIO, tokenizer: str | None = None) -> None:
    rows = read_jsonl(path)
    print(f"rows: {len(rows)}", file=out)
    print(f"schema: {_schema(rows)}", file=out)
    stats = text_field_stats(rows, tokenizer=_load_tokenizer(tokenizer))
    if stats:
        print("lengths:", file=out)
        _print_field_stats(stats, out)
    for row in rows[:n]:
        print(f"  {_short(json.dumps(row, ensure_ascii=False), 300)}", file=out)


# ---------------------------------------------------------------- tables

def _read_table(path: Path, sep: str):
    import pandas as pd

    try:
        # Tab-separated files are never quoted (benchmarks, ParaBank): quotes are text there.
        return pd.read_csv(path, sep=sep, quoting=3 if sep == "\t" else 0)  # 3 = csv.QUOTE_NONE
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise InspectError(f"{path}: cannot read as a table: {' '.join(str(err).split())}") from None


SNAKEMAKE_BENCHMARK_COLUMNS = ("s", "h:m:s", "max_rss")


def _is_benchmark(path: Path) -> bool:
    if not (path.is_file() and path.suffix == ".tsv"):
        return False
    for _, text in iter_lines(path):
        return tuple(text.split("\t")[:3]) == SNAKEMAKE_BENCHMARK_COLUMNS
    return False


@register("snakemake benchmark", "a rule's benchmark .tsv (s, h:m:s, max_rss, ... per run)", _is_benchmark)
def inspect_benchmark(path: Path, n: int, out: TextIO, tokenizer: str | None = None) -> None:
    table = _read_table(path, "\t")
    print(f"runs: {len(table)}  columns: {', '.join(map(str, table.columns))}", file=out)
    if len(table):
        seconds, rss = table["s"], table["max_rss"]
        print(f"wall seconds: mean={seconds.mean():.2f} max={seconds.max():.2f}; "
              f"max_rss MB: {rss.max() if rss.dtype.kind in 'if' else rss.iloc[0]}", file=out)
    print(table.to_string(index=False, max_rows=40), file=out)


def _benchmark_files(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*.tsv") if _is_benchmark(p)) if path.is_dir() else []


@register("snakemake benchmarks folder", "a folder of rule benchmarks (benchmarks/rules): time per rule",
          lambda p: bool(_benchmark_files(p)))
def inspect_benchmark_folder(path: Path, n: int, out: TextIO, tokenizer: str | None = None) -> None:
    import pandas as pd

    rows = []
    for file in _benchmark_files(path):
        table = _read_table(file, "\t")
        rule = file.relative_to(path).parts[0] if len(file.relative_to(path).parts) > 1 else file.stem
        rows.append({"rule": rule, "job": str(file.relative_to(path).with_suffix("")), "s": float(table["s"].iloc[-1]),
                     "max_rss_mb": float(table["max_rss"].iloc[-1]) if table["max_rss"].dtype.kind in "if" else None})
    jobs = pd.DataFrame(rows)
    per_rule = jobs.groupby("rule").agg(jobs=("s", "size"), total_s=("s", "sum"), max_s=("s", "max"),
                                        max_rss_mb=("max_rss_mb", "max")).sort_values("total_s", ascending=False)
    print(f"jobs: {len(jobs)}  total job seconds: {jobs['s'].sum():.0f} (wall time is less when jobs run in parallel)",
          file=out)
    print(per_rule.round(1).to_string(), file=out)
    print("\nslowest jobs:", file=out)
    print(jobs.sort_values("s", ascending=False).head(max(n, 5))[["job", "s", "max_rss_mb"]].round(1)
          .to_string(index=False), file=out)


def _inspect_table(path: Path, sep: str, n: int, out: TextIO) -> None:
    table = _read_table(path, sep)
    print(f"shape: {table.shape[0]} rows x {table.shape[1]} columns", file=out)
    print(f"columns: {', '.join(f'{c} ({t})' for c, t in table.dtypes.astype(str).items())}", file=out)
    print(table.to_string(index=False, max_rows=40, max_cols=20), file=out)


@register("csv table", "a CSV table (results tables, metrics.csv, ...)", lambda p: p.is_file() and p.suffix == ".csv")
def inspect_csv(path: Path, n: int, out: TextIO, tokenizer: str | None = None) -> None:
    _inspect_table(path, ",", n, out)


# ---------------------------------------------------------------- text and JSON

def _is_docs_tsv(path: Path) -> bool:
    if not (path.is_file() and path.suffix == ".txt"):
        return False
    if path.name == "docs.txt":
        return True
    for _, text in iter_lines(path):
        if text.strip():
            return bool(re.match(r"^[^\s\t]+\t\S", text))
    return False


@register("documents tsv", "docs.txt: one document a line, id<TAB>text", _is_docs_tsv)
def inspect_docs_tsv(path: Path, n: int, out: TextIO, tokenizer: str | None = None) -> None:
    docs = _read_docs(path, out)
    print(f"documents: {len(docs)}", file=out)
    rows = [{"id": k, "text": v} for k, v in docs.items()]
    print("lengths:", file=out)
    _print_field_stats(text_field_stats(rows, ["text"], _load_tokenizer(tokenizer)), out)
    for doc_id, text in list(docs.items())[:n]:
        print(f"  {doc_id}: {_short(text)}", file=out)


@register("tsv", "any other tab-separated file: a table, or ragged rows (e.g. ParaBank)",
          lambda p: p.is_file() and p.suffix == ".tsv")
def inspect_tsv(path: Path, n: int, out: TextIO, tokenizer: str | None = None) -> None:
    lines = [text for _, text in iter_lines(path) if text.strip()]
    widths = [len(text.split("\t")) for text in lines]
    if len(set(widths)) <= 1:
        _inspect_table(path, "\t", n, out)
        return
    print(f"ragged rows: {len(lines)} non-blank lines; fields per line: {format_summary(length_summary(widths))}",
          file=out)
    for text in lines[:n]:
        print("  " + " | ".join(_short(field, 100) for field in text.split("\t")), file=out)


@register("text", "a text file (.txt, .md, .log): lines, bytes, a few lines",
          lambda p: p.is_file() and p.suffix in (".txt", ".md", ".log"))
def inspect_text(path: Path, n: int, out: TextIO, tokenizer: str | None = None) -> None:
    lines = [text for _, text in iter_lines(path)]
    nonblank = [t for t in lines if t.strip()]
    print(f"lines: {len(lines)} ({len(nonblank)} non-blank)  bytes: {path.stat().st_size:,}  "
          f"whitespace tokens: {sum(len(t.split()) for t in lines):,}", file=out)
    print(f"tokens per non-blank line: {format_summary(length_summary([len(t.split()) for t in nonblank]))}", file=out)
    for text in nonblank[:n]:
        print(f"  {_short(text)}", file=out)


@register("json", "a JSON file: top-level structure and contents", lambda p: p.is_file() and p.suffix == ".json")
def inspect_json(path: Path, n: int, out: TextIO, tokenizer: str | None = None) -> None:
    try:
        value = read_json(path)
    except json.JSONDecodeError as err:
        raise MalformedInputError(path, err.lineno, f"JSON does not parse: {err.msg} (column {err.colno})") from None
    except UnicodeDecodeError as err:
        raise MalformedInputError(path, None, f"not valid UTF-8 ({err.reason} at byte {err.start})") from None
    if isinstance(value, dict):
        print(f"object with {len(value)} keys: {', '.join(map(str, list(value)[:30]))}", file=out)
        for key, item in list(value.items())[:40]:
            print(f"  {key}: {_short(json.dumps(item, ensure_ascii=False), 200)}", file=out)
    elif isinstance(value, list):
        print(f"array of {len(value)} items; first {min(n, len(value))}:", file=out)
        for item in value[:n]:
            print(f"  {_short(json.dumps(item, ensure_ascii=False), 300)}", file=out)
    else:
        print(f"{type(value).__name__}: {_short(json.dumps(value))}", file=out)


# ---------------------------------------------------------------- model parts, checkpoints, binaries

@register("checkpoint", "a training checkpoint: checkpoint/ (latest.json) or one step_* folder (state.json)",
          lambda p: p.is_dir() and ((p / "latest.json").is_file() or (p / "state.json").is_file()))
def inspect_checkpoint(path: Path, n: int, out: TextIO, tokenizer: str | None = None) -> None:
    if (path / "latest.json").is_file():
        folder = path / read_json(path / "latest.json")["folder"]
        print(f"latest: {folder.name}", file=out)
        path = folder
    state = read_json(path / "state.json")
    print(f"step: {state.get('step')}  epoch: {state.get('epoch')}  best step: {state.get('best_step')}  "
          f"best dev loss: {state.get('best_dev_loss')}  elapsed: {state.get('elapsed_s', 0):.1f} s", file=out)
    for row in state.get("metrics", [])[-n:]:
        print(f"  {row}", file=out)
    print(f"files: {', '.join(sorted(p.name for p in path.iterdir()))}", file=out)


@register("safetensors", "a weights file: tensors, shapes, dtypes, parameter count",
          lambda p: p.is_file() and p.suffix == ".safetensors")
def inspect_safetensors(path: Path, n: int, out: TextIO, tokenizer: str | None = None) -> None:
    from safetensors import safe_open

    with safe_open(str(path), framework="numpy") as handle:
        shapes = {name: handle.get_slice(name).get_shape() for name in handle.keys()}
        dtypes = {name: handle.get_slice(name).get_dtype() for name in handle.keys()}
    total = sum(math.prod(shape) for shape in shapes.values())
    print(f"tensors: {len(shapes)}  parameters: {total:,}  dtypes: {sorted(set(dtypes.values()))}", file=out)
    for name in sorted(shapes)[:max(n, 10)]:
        print(f"  {name}: {list(shapes[name])} {dtypes[name]}", file=out)


@register("tokenizer", "a tokenizer folder (tokenizer.json / tokenizer_config.json): vocabulary, a sample",
          lambda p: p.is_dir() and ((p / "tokenizer.json").is_file() or (p / "tokenizer_config.json").is_file()))
def inspect_tokenizer(path: Path, n: int, out: TextIO, tokenizer: str | None = None) -> None:
    from tokenizers import Tokenizer

    if (path / "tokenizer.json").is_file():
        loaded = Tokenizer.from_file(str(path / "tokenizer.json"))
        model = json.loads(loaded.to_str())["model"]["type"]
        print(f"type: {model}  vocabulary: {loaded.get_vocab_size():,}", file=out)
        sample = "Nuggets keep a few token states of each document."
        print(f"  {sample!r} -> {loaded.encode(sample).tokens}", file=out)
    print(f"files: {', '.join(sorted(p.name for p in path.iterdir()))}", file=out)


@register("model config", "a Hugging Face config folder (config.json only): architecture and sizes",
          lambda p: p.is_dir() and (p / "config.json").is_file())
def inspect_model_config(path: Path, n: int, out: TextIO, tokenizer: str | None = None) -> None:
    config = read_json(path / "config.json")
    keys = ("model_type", "architectures", "num_hidden_layers", "encoder_layers", "decoder_layers", "hidden_size",
            "d_model", "vocab_size")
    print("  ".join(f"{k}={config[k]}" for k in keys if k in config), file=out)


@register("image", "a figure (.png): size", lambda p: p.is_file() and p.suffix == ".png")
def inspect_image(path: Path, n: int, out: TextIO, tokenizer: str | None = None) -> None:
    from PIL import Image

    with Image.open(path) as image:
        print(f"{image.width} x {image.height} pixels, mode {image.mode}, {path.stat().st_size:,} bytes", file=out)


@register("compressed", "a .bz2/.gz download (e.g. a Wikipedia dump): sizes and the first lines",
          lambda p: p.is_file() and p.suffix in (".bz2", ".gz"))
def inspect_compressed(path: Path, n: int, out: TextIO, tokenizer: str | None = None) -> None:
    import bz2
    import gzip
    import itertools

    opener = bz2.open if path.suffix == ".bz2" else gzip.open
    with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
        head = list(itertools.islice(handle, max(n, 5)))
    print(f"compressed bytes: {path.stat().st_size:,}", file=out)
    for line in head:
        print(f"  {_short(line.rstrip())}", file=out)
