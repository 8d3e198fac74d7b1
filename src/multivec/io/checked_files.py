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
- text that is not what the file says it is, refused or handled in the one place every reader goes
  through (``decode_line`` for a line, ``decode_text`` for a whole file, ``loads_json`` for JSON): a
  control character (C0 other than tab, newline and CR; DEL; a lone surrogate, which only a JSON
  ``\\u`` escape can make) names file:line, the column and the character code; a JSON object with a
  key twice names the key and its second line (``json`` would keep the last value silently); a
  UTF-8 byte-order mark at the start of a file is dropped with a WARNING naming the file (the file is
  valid UTF-8, the mark carries no text; read as text it would glue U+FEFF to the first id or
  field); a UTF-16 file is named as such. Other invisible characters (zero-width, bidi marks, C1
  controls, private use) are kept: real text has them (the NUGGET ``docs.txt`` holds U+0092,
  U+009D, U+00AD, U+F0B7) and tokenizers read them; only ids refuse them (``read_docs_tsv``);
- ``split_lines``: a whole text's lines numbered as the file's (at LF only, not at U+2028 or U+0085);
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
import re
import unicodedata
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

    def __init__(self, path: str | os.PathLike, what: str, doc: str = "", pos: int = 0, *, parse_error: bool = True):
        json.JSONDecodeError.__init__(self, what, doc, pos)
        self.path = str(path)
        self.line = self.lineno if doc else None
        where = f"{path}:{self.line}" if self.line is not None else str(path)
        parses = "JSON does not parse: " if parse_error else ""
        detail = f"{parses}{what} (column {self.colno})" if doc else what
        self.args = (f"{where}: {detail}",)

    def __str__(self) -> str:
        return self.args[0]


# ---------------------------------------------------------------- text that is not text

BOM = "\ufeff"
# C0 controls but tab, newline and CR; DEL; lone surrogates (only a JSON \u escape can make one: strict
# UTF-8 decoding refuses encoded surrogates)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
# the same C0 controls and DEL as bytes: ``bytes.translate`` finds them ten times faster than the regex (which only
# runs to name the column once one is there); UTF-8 never uses these bytes inside a multi-byte character
_CONTROL_BYTES = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])


def _has_control(raw: bytes) -> bool:
    return len(raw.translate(None, _CONTROL_BYTES)) != len(raw)


def _encoded(text: str) -> bytes:
    """``text`` as UTF-8 for ``_has_control``; a lone surrogate (no UTF-8 form) becomes a NUL, so that the regex
    runs and names it."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return b"\x00"


_C0_NAMES = ("NUL SOH STX ETX EOT ENQ ACK BEL BS HT LF VT FF CR SO SI DLE DC1 DC2 DC3 DC4 NAK SYN ETB CAN EM SUB ESC "
             "FS GS RS US").split()


def describe_character(char: str) -> str:
    """``U+0000 (NUL)``, ``U+D800 (a lone surrogate)``, ``U+200B (ZERO WIDTH SPACE)``."""
    code = ord(char)
    if code < 0x20:
        name = _C0_NAMES[code]
    elif code == 0x7F:
        name = "DEL"
    elif 0xD800 <= code <= 0xDFFF:
        name = "a lone surrogate, half of a UTF-16 pair"
    else:
        name = unicodedata.name(char, unicodedata.category(char))
    return f"U+{code:04X} ({name})"


def _control_error(path, line: int | None, match: re.Match, column_base: int = 0) -> MalformedInputError:
    return MalformedInputError(path, line, f"control character {describe_character(match.group())} at column "
                                           f"{column_base + match.start() + 1}: not text (a binary or corrupt file, "
                                           f"or a bad escape?)")


def check_text(text: str, path: str | os.PathLike, line: int | None) -> str:
    """``text`` (one line) unchanged, or ``MalformedInputError`` naming ``path:line`` and the column of its first
    control character (C0 but tab, newline and CR; DEL; a lone surrogate)."""
    match = _CONTROL.search(text) if _has_control(_encoded(text)) else None
    if match:
        raise _control_error(path, line, match)
    return text


def _utf8_error(path, err: UnicodeDecodeError, line: int | None, raw: bytes) -> MalformedInputError:
    if line in (None, 1) and err.start == 0 and raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return MalformedInputError(path, line or 1, "not valid UTF-8: the file starts with a UTF-16 byte-order mark "
                                                    "(it is UTF-16; convert it to UTF-8)")
    return MalformedInputError(path, line, f"not valid UTF-8 ({err.reason} at byte {err.start})")


def _drop_bom(text: str, path) -> str:
    if text.startswith(BOM):
        log.warning("%s: ignored the UTF-8 byte-order mark (U+FEFF) at the start of the file", path)
        return text[1:]
    return text


def decode_line(raw: bytes | str, path: str | os.PathLike, number: int) -> str:
    """One line of a UTF-8 text file, as every line reader reads it: decoded (bad UTF-8 names the line), the
    line terminator (LF, CRLF) removed, a byte-order mark at the start of the file (line 1) dropped with a
    WARNING, and a control character refused (``check_text``). ``raw`` may already be text (a reader that
    decodes the whole stream for speed)."""
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise _utf8_error(path, err, number, raw) from None
    else:
        text, raw = raw, _encoded(raw)
    text = text.rstrip("\r\n")
    if number == 1:
        text = _drop_bom(text, path)
    if _has_control(raw):
        match = _CONTROL.search(text)
        if match:
            raise _control_error(path, number, match)
    return text


def decode_text(raw: bytes | str, path: str | os.PathLike) -> str:
    """A whole UTF-8 text file (or archive member, ``path`` naming it), checked as ``decode_line`` checks a
    line; errors name the line (and column) in the file. ``raw`` may already be text (decoded by a reader with
    its own message for bad UTF-8). Line ends are kept: split with ``split_lines``."""
    if isinstance(raw, str):
        text, raw = raw, _encoded(raw)
    else:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            line = raw.count(b"\n", 0, err.start) + 1
            start = raw.rfind(b"\n", 0, err.start) + 1
            err = UnicodeDecodeError(err.encoding, err.object, err.start - start, err.end - start, err.reason)
            raise _utf8_error(path, err, line, raw) from None
    text = _drop_bom(text, path)
    match = _CONTROL.search(text) if _has_control(raw) else None
    if match:
        line = text.count("\n", 0, match.start()) + 1
        start = text.rfind("\n", 0, match.start()) + 1
        raise _control_error(path, line, match, -start)
    return text


def split_lines(text: str) -> list[str]:
    """The lines of a text as a file reader numbers them: split at LF only (``str.splitlines`` also splits at
    U+0085, U+2028, VT, FF, ..., so its line numbers would not be the file's), a trailing CR removed."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


class _DuplicateKey(Exception):
    pass


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]]')
_JSON_COLON = re.compile(r"\s*:")
# an escape that can decode to a control character or a lone surrogate (\b, \f, \u0000-\u001f, \u007f,
# \ud800-\udfff); a hit only means "look closer" (a surrogate pair is fine)
_SUSPECT_ESCAPE = re.compile(r"\\(?:[bf]|u(?:00[01]|007[fF]|[dD][89a-fA-F]))")


def _json_problem(text: str) -> tuple[int, str] | None:
    """``(position, what)`` of the first duplicate key or bad string in a JSON text that parses."""
    stack: list[set[str] | None] = []
    for token in _JSON_TOKEN.finditer(text):
        first = token.group()[0]
        if first == "{":
            stack.append(set())
        elif first == "[":
            stack.append(None)
        elif first in "}]":
            stack.pop()
        else:
            value = json.loads(token.group())
            bad = _CONTROL.search(value)
            if bad:
                return token.start(), (f"control character {describe_character(bad.group())}, written as an escape "
                                       f"in the JSON string that starts here: not text")
            if stack and stack[-1] is not None and _JSON_COLON.match(text, token.end()):
                if value in stack[-1]:
                    return token.start(), (f"duplicate key {_shown(value)} in one JSON object (json would keep "
                                           f"only the last value)")
                stack[-1].add(value)
    return None


def _position(text: str, pos: int, first_line: int) -> tuple[int, int]:
    return first_line + text.count("\n", 0, pos), pos - text.rfind("\n", 0, pos)


class _JsonProblem(Exception):
    def __init__(self, pos: int, what: str):
        super().__init__(what)
        self.pos, self.what = pos, what


def _checked_json(text: str) -> Any:
    """``json.loads``, or ``_JsonProblem`` at the first duplicate key or string that is not text."""
    try:
        obj = json.loads(text, object_pairs_hook=_unique_pairs)
    except _DuplicateKey as err:
        problem = _json_problem(text) or (0, f"duplicate key {_shown(err.args[0])} in one JSON object")
    else:
        if "\\" not in text or not _SUSPECT_ESCAPE.search(text):
            return obj
        problem = _json_problem(text)
        if problem is None:
            return obj
    raise _JsonProblem(*problem)


def loads_json(text: str, path: str | os.PathLike, first_line: int = 1) -> Any:
    """``json.loads`` for input data: a key twice in one object, or a string escape that makes a control
    character or a lone surrogate, raises ``MalformedInputError`` naming ``path:line`` (``first_line``: the
    file's line where ``text`` starts), the column and the key or character. A parse error is left to the
    caller (``json.JSONDecodeError``)."""
    try:
        return _checked_json(text)
    except _JsonProblem as problem:
        line, column = _position(text, problem.pos, first_line)
        raise MalformedInputError(path, line, f"{problem.what} (column {column})") from None


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
    """Yield ``(line_number, text)`` of a UTF-8 file without the line terminator (checked by
    ``decode_line``: bad UTF-8 and control characters name the line, a leading byte-order mark is dropped)."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            yield number, decode_line(raw, path, number)


def iter_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` of a JSONL file; blank lines are ignored, anything else
    must be a JSON object, with each key once (``loads_json``)."""
    for number, text in iter_lines(path):
        if not text.strip():
            continue
        try:
            row = loads_json(text, path, number)
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


_INVISIBLE = frozenset(("Cc", "Cf", "Co", "Cs", "Zl", "Zp"))


def _check_id(doc_id: str, path, number: int) -> None:
    """An id is matched exactly (``task.jsonl`` refers to it): space around it or an invisible character in it
    (zero-width, bidi mark, byte-order mark of a file glued onto this one) would make a lookup fail far from
    here with an id that looks right."""
    if doc_id != doc_id.strip():
        raise MalformedInputError(path, number, f"document id {doc_id!r} has space before or after it")
    for column, char in enumerate(doc_id, start=1):
        if unicodedata.category(char) in _INVISIBLE:
            raise MalformedInputError(path, number, f"document id {doc_id!r} holds the invisible character "
                                                    f"{describe_character(char)} at column {column}")


def read_docs_tsv(path: str | os.PathLike, on_empty: str = "error", check=None) -> dict[str, str]:
    """Read a NUGGET-release ``docs.txt`` (``id<TAB>text`` a line) into ``{id: text}``.

    Every line needs a tab and a non-empty id, each id once, with no space around it and no invisible
    character in it (errors name file:line).
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
        _check_id(doc_id, path, number)
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
    """A JSON file; a parse error, bad UTF-8, a key twice in one object or a control character (raw or escaped,
    see ``loads_json``) raises ``MalformedJsonError`` naming file, line and column; a leading byte-order mark is
    dropped with a WARNING."""
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
            raise MalformedJsonError(path, "not valid UTF-8: the file starts with a UTF-16 byte-order mark (it is "
                                           "UTF-16; convert it to UTF-8)") from None
        raise MalformedJsonError(path, f"not valid UTF-8 ({err.reason} at byte {err.start})") from None
    text = _drop_bom(text, path)
    control = _CONTROL.search(text) if _has_control(raw) else None
    if control:
        raise MalformedJsonError(path, f"control character {describe_character(control.group())}: not text",
                                 text, control.start(), parse_error=False)
    try:
        return _checked_json(text)
    except _JsonProblem as problem:
        raise MalformedJsonError(path, problem.what, text, problem.pos, parse_error=False) from None
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
