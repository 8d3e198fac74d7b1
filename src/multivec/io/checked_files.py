"""Checked reading and writing of the pipeline's text artifacts.

Every reader names the file and the 1-based line of malformed input (a non-UTF-8
line, a JSONL line that does not parse, an empty document) instead of dropping it
silently. Where a skip is the documented behaviour (``on_empty="skip"``), the number
of skipped lines is logged.

``MalformedInputError`` is the project's one data error: ``file:line: what is wrong`` (for
archives and binary files ``file: member/record ...``). The helpers every reader of an
external file uses to check what its consumers rely on:

- ``iter_lines`` / ``iter_jsonl``: ``(line_number, text | object)``; bad UTF-8 and bad JSON
  name the line;
- ``check_fields(row, {"id": "string", ...}, path, line)``: required keys and their kinds
  (``"string"``, ``"text"`` (non-empty string), ``"integer"`` (not a bool), ``"number"``
  (finite, not a bool), ``"strings"`` (list of strings), ``"object"``);
- ``FirstSeen``: duplicate ids name the line of the first definition;
- ``read_json``: a parse error names file, line and column;
- ``yaml_safe_loader``: PyYAML's safe loader on libyaml's C parser (the config and claims files).

Every data builder also records what it read and wrote: ``write_meta`` puts a
``meta.json`` next to its outputs (input and output counts, skips, warnings), and
``check_minimum`` warns (log WARNING, which rules send to stderr and their log) when a
count falls below its configured minimum and raises when it is zero — so a source that
shrank or a file that is empty never passes as a smaller but valid result.
"""

from __future__ import annotations

import json
import logging
import math
import os
from pathlib import Path
from typing import Any, Iterable, Iterator

log = logging.getLogger(__name__)


class MalformedInputError(ValueError):
    """Raised for input that cannot be read; the message names file and line."""

    def __init__(self, path: str | os.PathLike, line: int | None, what: str):
        self.path, self.line = str(path), line
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {what}")


class MalformedJsonError(MalformedInputError, json.JSONDecodeError):
    """A JSON file that does not parse or is not UTF-8 (``read_json``); still a ``json.JSONDecodeError``,
    so callers that catch that keep working, but its message names the file and line."""

    def __init__(self, path: str | os.PathLike, what: str, doc: str = "", pos: int = 0):
        json.JSONDecodeError.__init__(self, what, doc, pos)
        self.path = str(path)
        self.line = self.lineno if doc else None
        where = f"{path}:{self.line}" if self.line is not None else str(path)
        detail = f"JSON does not parse: {what} (column {self.colno})" if doc else what
        self.args = (f"{where}: {detail}",)

    def __str__(self) -> str:
        return self.args[0]


_KINDS: dict[str, tuple[Any, str]] = {
    "string": (lambda v: isinstance(v, str), "a string"),
    "text": (lambda v: isinstance(v, str) and bool(v.strip()), "a non-empty string"),
    "integer": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    "number": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
               "a finite number"),
    "strings": (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "a list of strings"),
    "object": (lambda v: isinstance(v, dict), "an object"),
}


def _shown(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def check_fields(row: dict[str, Any], fields: dict[str, str], path: str | os.PathLike, line: int | None) -> None:
    """Raise ``MalformedInputError`` (``path:line``) when ``row`` lacks a key of ``fields`` or a value is not
    of its kind (``"string"``, ``"text"``, ``"integer"``, ``"number"``, ``"strings"``, ``"object"``; see the
    module docstring). ``null`` is never a string (it must not become the text ``"None"``) and ``true`` is
    never an integer."""
    missing = [key for key in fields if key not in row]
    if missing:
        raise MalformedInputError(path, line, f"missing field(s) {', '.join(missing)}")
    for key, kind in fields.items():
        accepts, name = _KINDS[kind]
        if not accepts(row[key]):
            raise MalformedInputError(path, line, f"field {key!r} must be {name}, got {_shown(row[key])}")


class FirstSeen:
    """Ids defined in one file, each with the line that defined it: ``add`` raises on a second definition
    naming both lines."""

    def __init__(self, path: str | os.PathLike, what: str = "id"):
        self.path, self.what = path, what
        self.lines: dict[Any, int | None] = {}

    def add(self, key: Any, line: int | None) -> None:
        if key in self.lines:
            first = self.lines[key]
            raise MalformedInputError(self.path, line, f"duplicate {self.what} {_shown(key)}"
                                                       + (f" (first on line {first})" if first is not None else ""))
        self.lines[key] = line

    def __contains__(self, key: Any) -> bool:
        return key in self.lines

    def __len__(self) -> int:
        return len(self.lines)


def iter_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` of a UTF-8 file without the line terminator."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise MalformedInputError(path, number, f"not valid UTF-8 ({err.reason} at byte {err.start})") from None
            yield number, text.rstrip("\r\n")


def iter_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` of a JSONL file; blank lines are ignored, anything else
    must be a JSON object."""
    for number, text in iter_lines(path):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as err:
            raise MalformedInputError(path, number, f"JSONL line does not parse: {err.msg} (column {err.colno})") from None
        if not isinstance(row, dict):
            raise MalformedInputError(path, number, f"expected a JSON object, got {type(row).__name__}")
        yield number, row


def read_jsonl(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Read a JSONL file into a list of objects (see ``iter_jsonl``)."""
    return [row for _, row in iter_jsonl(path)]


def write_jsonl(path: str | os.PathLike, rows: Iterable[dict[str, Any]]) -> int:
    """Write rows as JSONL (UTF-8, one object a line); returns the row count."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    return count


def read_docs_tsv(path: str | os.PathLike, on_empty: str = "error", check=None) -> dict[str, str]:
    """Read a NUGGET-release ``docs.txt`` (``id<TAB>text`` a line) into ``{id: text}``.

    Every line needs a tab and a non-empty id, each id once (errors name file:line).
    ``on_empty``: ``"error"`` (default) raises on an empty document; ``"skip"`` drops it
    and logs how many were dropped; ``"keep"`` keeps it as ``""`` and logs how many were kept
    (the released NUGGET PI sets have empty documents that their task files still use).
    ``check``: each document text goes to ``check.add(text, line)`` and ``check.finish()`` runs at the
    end, e.g. ``multivec.data.language.LanguageCheck(path, "en", "documents")`` (passed in by the
    caller, so that this module, which the data modules import, imports none of them).
    """
    if on_empty not in ("error", "skip", "keep"):
        raise ValueError(f"on_empty must be 'error', 'skip' or 'keep', not {on_empty!r}")
    docs: dict[str, str] = {}
    ids = FirstSeen(path, "document id")
    skipped = kept_empty = 0
    for number, text in iter_lines(path):
        if not text.strip():
            continue
        if "\t" not in text:
            raise MalformedInputError(path, number, "expected 'id<TAB>text'")
        doc_id, body = text.split("\t", 1)
        if not doc_id.strip():
            raise MalformedInputError(path, number, "empty document id before the tab")
        ids.add(doc_id, number)
        if not body.strip():
            if on_empty == "error":
                raise MalformedInputError(path, number, f"empty document {doc_id!r}")
            if on_empty == "skip":
                skipped += 1
                continue
            kept_empty += 1
            body = ""
        if check is not None:
            check.add(body, number)
        docs[doc_id] = body
    if check is not None:
        check.finish()
    if skipped:
        log.warning("%s: skipped %d empty documents", path, skipped)
    if kept_empty:
        log.warning("%s: kept %d empty documents as ''", path, kept_empty)
    return docs


def write_csv(path: str | os.PathLike, rows: list[dict[str, Any]]) -> None:
    """Write rows (dicts with the same keys) as a CSV table with a header."""
    import csv

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def write_docs_tsv(path: str | os.PathLike, docs: dict[str, str]) -> None:
    """Write ``{id: text}`` in the ``docs.txt`` format (tabs/newlines in text become spaces)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for doc_id, body in docs.items():
            clean = " ".join(body.split())
            handle.write(f"{doc_id}\t{clean}\n")


def yaml_safe_loader():
    """PyYAML's safe loader, on libyaml's C parser where PyYAML was built with it (the same objects). Every
    Snakemake start reads the config and claims files (each SLURM job twice): 0.26 s with the pure-Python
    parser, 0.04 s with this one."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_json(path: str | os.PathLike) -> Any:
    """A JSON file; a parse error or bad UTF-8 raises ``MalformedJsonError`` naming file, line and column."""
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise MalformedJsonError(path, f"not valid UTF-8 ({err.reason} at byte {err.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise MalformedJsonError(path, err.msg, err.doc, err.pos) from None


def write_json(path: str | os.PathLike, obj: Any) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(obj, handle, ensure_ascii=False, indent=2)
        handle.write("\n")


META_FILE = "meta.json"


class EmptyOutputError(ValueError):
    """A builder produced nothing (zero documents or queries); the message names its inputs."""


def check_minimum(name: str, count: int, minimum: int | None, inputs: str | os.PathLike | list,
                  warnings: list[str] | None = None) -> None:
    """Raise ``EmptyOutputError`` when ``count`` is 0; log a WARNING (and append it to ``warnings``)
    when it is below ``minimum`` (``None``: only the zero check)."""
    where = ", ".join(map(str, inputs)) if isinstance(inputs, (list, tuple)) else str(inputs)
    if count <= 0:
        raise EmptyOutputError(f"{where}: no {name} built (0); the input is empty or every item was skipped")
    if minimum is not None and count < minimum:
        message = (f"{where}: only {count} {name}, below the configured minimum of {minimum} "
                   f"(a source file may have shrunk or changed)")
        log.warning(message)
        if warnings is not None:
            warnings.append(message)


def write_meta(folder: str | os.PathLike, builder: str, inputs: dict[str, Any], counts: dict[str, Any],
               warnings: list[str] | None = None, **extra: Any) -> Path:
    """Write ``<folder>/meta.json``: the builder, its input files, its counts and warnings."""
    path = Path(folder) / META_FILE
    write_json(path, {"builder": builder, "inputs": {k: [str(p) for p in v] if isinstance(v, (list, tuple)) else str(v)
                                                     for k, v in inputs.items()},
                      "counts": counts, "warnings": list(warnings or []), **extra})
    return path
