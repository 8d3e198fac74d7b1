"""Checked reading and writing of the pipeline's text artifacts.

Every reader names the file and the 1-based line of malformed input (a non-UTF-8
line, a JSONL line that does not parse, an empty document) instead of dropping it
silently. Where a skip is the documented behaviour (``on_empty="skip"``), the number
of skipped lines is logged.

Every data builder also records what it read and wrote: ``write_meta`` puts a
``meta.json`` next to its outputs (input and output counts, skips, warnings), and
``check_minimum`` warns (log WARNING, which rules send to stderr and their log) when a
count falls below its configured minimum and raises when it is zero — so a source that
shrank or a file that is empty never passes as a smaller but valid result.
"""

from __future__ import annotations

import json
import logging
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


def read_docs_tsv(path: str | os.PathLike, on_empty: str = "error") -> dict[str, str]:
    """Read a NUGGET-release ``docs.txt`` (``id<TAB>text`` a line) into ``{id: text}``.

    ``on_empty``: ``"error"`` (default) raises on an empty document; ``"skip"`` drops it
    and logs how many were dropped; ``"keep"`` keeps it as ``""`` and logs how many were kept
    (the released NUGGET PI sets have empty documents that their task files still use).
    """
    if on_empty not in ("error", "skip", "keep"):
        raise ValueError(f"on_empty must be 'error', 'skip' or 'keep', not {on_empty!r}")
    docs: dict[str, str] = {}
    skipped = kept_empty = 0
    for number, text in iter_lines(path):
        if not text.strip():
            continue
        if "\t" not in text:
            raise MalformedInputError(path, number, "expected 'id<TAB>text'")
        doc_id, body = text.split("\t", 1)
        if doc_id in docs:
            raise MalformedInputError(path, number, f"duplicate document id {doc_id!r}")
        if not body.strip():
            if on_empty == "error":
                raise MalformedInputError(path, number, f"empty document {doc_id!r}")
            if on_empty == "skip":
                skipped += 1
                continue
            kept_empty += 1
            body = ""
        docs[doc_id] = body
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


def read_json(path: str | os.PathLike) -> Any:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


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
