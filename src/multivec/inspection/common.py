"""Shared pieces of the artifact inspectors: the ``Report`` they print to, length statistics,
JSONL/table/safetensors readers that fail with a one-line message naming the file.

Everything ``inspect`` prints goes through ``Report`` (``line``, ``block``, ``table``), which passes it
through ``terminal_safe``: text from data files (documents, ids, file names, table cells, config values,
log lines) can hold escape sequences that would clear the user's screen, set the window title or write the
clipboard, and those characters are printed as Python escapes (``\\x1b``, ``\\u202e``) instead. An
inspector cannot forget it: it has no other way to print (a test checks no inspector module prints).

No paper equation lives here; the inspectors only describe what the pipeline wrote.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, TextIO

from multivec.io import MalformedInputError, iter_jsonl, iter_lines, read_json


class InspectError(ValueError):
    """The path is not an artifact ``inspect`` knows, or cannot be read as one."""


# ---------------------------------------------------------------- terminal safety

# What must never reach the user's terminal raw from a data file: C0 controls (ESC starts the CSI and OSC
# sequences that clear the screen, set the window title (OSC 0) or write the clipboard (OSC 52); BEL, BS, CR,
# tab, VT, FF move the cursor or overwrite a line; a newline inside one value would forge a line of its own),
# DEL, C1 controls U+0080-U+009F (8-bit CSI U+009B, OSC U+009D, ST U+009C, NEL U+0085), the bidirectional
# controls that reorder what is shown (ALM U+061C, LRM/RLM U+200E/U+200F, embeddings and overrides
# U+202A-U+202E, isolates U+2066-U+2069), the line and paragraph separators U+2028/U+2029, and lone
# surrogates (a JSON "\ud800", an undecodable file name), which the terminal's encoding cannot print at all.
TERMINAL_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                             r"\ud800-\udfff]")
_NAMED_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED_ESCAPES.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def terminal_safe(text: Any) -> str:
    """``str(text)`` with every ``TERMINAL_UNSAFE`` character written as its Python escape (ESC as ``\\x1b``,
    a right-to-left override as ``\\u202e``, a newline as ``\\n``): one line a terminal shows as it is.

    Other text, backslashes included, is unchanged, so ordinary output is the same as before.
    """
    text = str(text)
    return TERMINAL_UNSAFE.sub(_escape, text) if TERMINAL_UNSAFE.search(text) else text


def terminal_safe_frame(frame):
    """A pandas DataFrame whose text cells, column names and index labels are ``terminal_safe`` (``frame``
    itself when none needs it), so that ``to_string`` aligns the escaped text."""

    def unsafe(value) -> bool:
        return isinstance(value, str) and TERMINAL_UNSAFE.search(value) is not None

    def clean(value):
        return terminal_safe(value) if unsafe(value) else value

    def labels(index):
        return (value for level in range(index.nlevels) for value in index.get_level_values(level))

    copied = any(map(unsafe, labels(frame.columns))) or any(map(unsafe, labels(frame.index)))
    if copied:
        frame = frame.rename(columns=clean, index=clean)  # a copy
    for position in range(frame.shape[1]):
        column = frame.iloc[:, position]
        if column.dtype.kind not in "biufcmM" and any(map(unsafe, column)):  # text may hold anything
            if not copied:
                frame, copied = frame.copy(), True
            frame.isetitem(position, column.map(clean))
    return frame


@dataclass
class Report:
    """Where an inspector writes, and the user's options (``--n`` samples, ``--tokenizer``).

    The only way an inspector prints: every method writes ``terminal_safe`` text.
    """

    out: TextIO
    n: int = 3
    tokenizer: str | None = None

    def line(self, text: Any = "") -> None:
        """One line; any control character in ``text``, a newline included, is printed escaped."""
        print(terminal_safe(text), file=self.out)

    def block(self, text: str) -> None:
        """Text of several lines that the inspector composed: each line printed as ``line`` prints it."""
        for part in str(text).split("\n"):
            self.line(part)

    def table(self, frame, **to_string) -> None:
        """A pandas DataFrame as ``frame.to_string(**to_string)`` shows it, with its text made safe first."""
        self.block(terminal_safe_frame(frame).to_string(**to_string))

    def load_tokenizer(self):
        """The ``--tokenizer`` given on the command line (None when none was)."""
        if not self.tokenizer:
            return None
        from multivec.io.resources import load_tokenizer

        return load_tokenizer(self.tokenizer)


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


def print_field_stats(stats: dict[str, dict[str, dict[str, float]]], report: Report) -> None:
    for name, per_unit in stats.items():
        for unit, summary in per_unit.items():
            report.line(f"  {name} {unit}: {format_summary(summary)}")


# ---------------------------------------------------------------- text helpers

def short(text: Any, limit: int = 240) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def short_json(value: Any, limit: int = 200) -> str:
    return short(json.dumps(value, ensure_ascii=False), limit)


def schema(rows: Sequence[dict[str, Any]]) -> str:
    """``key: type`` for every key of some JSON rows, noting keys that only some rows have."""
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


# ---------------------------------------------------------------- recognising paths

def first_jsonl_row(path: Path) -> dict[str, Any] | None:
    """The first non-blank JSONL row of ``path`` (None when it is not a JSON object)."""
    for _, text in iter_lines(path):
        if text.strip():
            try:
                row = json.loads(text)
            except json.JSONDecodeError:
                return None
            return row if isinstance(row, dict) else None
    return None


def first_line(path: Path) -> str | None:
    """The first line of a text file (None for an empty file)."""
    for _, text in iter_lines(path):
        return text
    return None


def is_dir_with(*names: str) -> Callable[[Path], bool]:
    """Matches a folder holding every one of ``names`` as a file."""
    return lambda p: p.is_dir() and all((p / name).is_file() for name in names)


def has_suffix(*suffixes: str) -> Callable[[Path], bool]:
    """Matches a file whose last extension is one of ``suffixes``."""
    return lambda p: p.is_file() and p.suffix in suffixes


def jsonl_first_row_has(*keys: str, without: Sequence[str] = ()) -> Callable[[Path], bool]:
    """Matches a ``.jsonl`` file whose first row has every key of ``keys`` and none of ``without``."""

    def matches(path: Path) -> bool:
        if not (path.is_file() and path.suffix == ".jsonl"):
            return False
        row = first_jsonl_row(path)
        return row is not None and all(k in row for k in keys) and not any(k in row for k in without)

    return matches


def json_object_has(*keys: str) -> Callable[[Path], bool]:
    """Matches a ``.json`` file holding an object with every key of ``keys``."""

    def matches(path: Path) -> bool:
        if not (path.is_file() and path.suffix == ".json"):
            return False
        try:
            value = read_json(path)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return False
        return isinstance(value, dict) and all(k in value for k in keys)

    return matches


# ---------------------------------------------------------------- readers with clear errors

def read_json_checked(path: Path) -> Any:
    """``read_json`` whose parse errors name the file and line."""
    try:
        return read_json(path)
    except json.JSONDecodeError as err:
        raise MalformedInputError(path, err.lineno, f"JSON does not parse: {err.msg} (column {err.colno})") from None
    except UnicodeDecodeError as err:
        raise MalformedInputError(path, None, f"not valid UTF-8 ({err.reason} at byte {err.start})") from None


def read_table(path: Path, sep: str):
    """A CSV/TSV file as a pandas DataFrame; unreadable tables raise ``InspectError`` naming the file."""
    import pandas as pd

    try:
        # Tab-separated files are never quoted (benchmarks, ParaBank): quotes are text there.
        return pd.read_csv(path, sep=sep, quoting=3 if sep == "\t" else 0)  # 3 = csv.QUOTE_NONE
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise InspectError(f"{path}: cannot read as a table: {' '.join(str(err).split())}") from None


_TYPE_NAMES = {str: "a string", int: "an integer", list: "a list", float: "a number", dict: "an object"}


def load_rows_checked(path: Path, required: dict[str, type | None], label: str,
                      check: Callable[[dict[str, Any]], str | None] | None = None) -> list[dict[str, Any]]:
    """JSONL rows, each checked to have ``required`` keys of the given types (None: any type)
    and to pass ``check`` (which returns what is wrong, or None).

    A row that fails raises ``MalformedInputError`` naming the file and line, e.g.
    ``corpus row lacks a string 'id'``; ``true`` is not accepted where an integer is required.
    """
    rows = []
    for number, row in iter_jsonl(path):
        for key, kind in required.items():
            value = row.get(key)
            wrong = kind is not None and (not isinstance(value, kind) or (kind is int and isinstance(value, bool)))
            if key not in row or wrong:
                what = f"{_TYPE_NAMES[kind]} {key!r}" if kind in _TYPE_NAMES else repr(key)
                raise MalformedInputError(path, number, f"{label} lacks {what}")
        problem = check(row) if check is not None else None
        if problem:
            raise MalformedInputError(path, number, f"{label}: {problem}")
        rows.append(row)
    return rows


SAFETENSORS_DTYPE_BYTES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "I16": 2, "U16": 2, "F16": 2,
                           "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8}


def read_safetensors_header(path: Path) -> dict[str, dict[str, Any]]:
    """The tensors of a ``.safetensors`` file, ``{name: {"dtype", "shape", "data_offsets"}}``, checked.

    The format is an 8-byte little-endian header length, a JSON header, then the tensor bytes.
    A truncated file or a garbage header raises ``MalformedInputError`` naming the file and
    what is wrong, instead of the library's traceback.
    """
    size = path.stat().st_size

    def bad(what: str) -> MalformedInputError:
        return MalformedInputError(path, None, f"not a valid safetensors file: {what}")

    with open(path, "rb") as handle:
        prefix = handle.read(8)
        if len(prefix) < 8:
            raise bad(f"{size} bytes, shorter than the 8-byte header length")
        (header_length,) = struct.unpack("<Q", prefix)
        if header_length > size - 8:
            raise bad(f"header length {header_length:,} exceeds the file's {size - 8:,} remaining bytes "
                      "(truncated file or garbage header)")
        raw = handle.read(header_length)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise bad(f"header is not JSON ({type(err).__name__}: {short(err, 80)})") from None
    if not isinstance(header, dict):
        raise bad(f"header is a JSON {type(header).__name__}, not an object")
    header.pop("__metadata__", None)
    data_bytes = size - 8 - header_length
    for name, entry in header.items():
        if not (isinstance(entry, dict) and {"dtype", "shape", "data_offsets"} <= entry.keys()):
            raise bad(f"tensor {name!r} lacks dtype/shape/data_offsets in the header")
        start, end = entry["data_offsets"]
        if end > data_bytes:
            raise bad(f"tensor {name!r} ends at byte {end:,} of the data but the file holds {data_bytes:,} "
                      "(truncated file)")
        width = SAFETENSORS_DTYPE_BYTES.get(entry["dtype"])
        if width is not None and end - start != width * math.prod(entry["shape"]):
            raise bad(f"tensor {name!r}: {end - start} bytes for shape {entry['shape']} {entry['dtype']}")
    return header


def parameter_count(files: Iterable[Path]) -> tuple[int, int]:
    """Total parameters and tensors over some ``.safetensors`` files (headers only)."""
    total = tensors = 0
    for file in files:
        for entry in read_safetensors_header(file).values():
            total += math.prod(entry["shape"])
            tensors += 1
    return total, tensors


CJK = re.compile(r"[\u4e00-\u9fff]")
