"""The audited paper-scale settings (docs/paper_settings.md) as data, and the settings of a run that differ from them.

docs/paper_settings.md is the one source: one Markdown table per audited merge of config files (a line
"Merged config: `a` + `b`" above it), one row per setting, its config key and, first in the "Paper scale" cell,
the backticked value that merge gives. tests/test_paper_settings.py holds the config files to those values; a
paper-scale run that overrides one on purpose (a `--config`, an overlay) is not stopped, but the workflow prints
each setting that differs at its start and results/claims.md lists them (rules/claims.smk).

Shared by the three works; reads no heavy library at import time (the workflow imports it at every start).
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from typing import Any

HEADER = ["Work", "Setting", "Config key", "Paper / authors", "Source", "Paper scale", "Status"]
# The audited merge a paper-scale run is compared with: the demo config under paper.yaml.
PAPER_FILES = ("config/config.yaml", "config/paper.yaml")
NO_KEY = ("—", "-")
MISSING = object()


@dataclasses.dataclass(frozen=True)
class AuditedTable:
    files: tuple[str, ...]  # the config files merged, in order
    rows: tuple[dict[str, Any], ...]  # the cells by column name, plus "line" (1-based, in the document)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def audited_tables(doc: str | Path) -> list[AuditedTable]:
    """Every audited table of ``doc``; a malformed table stops naming its line."""
    doc = Path(doc)
    lines = doc.read_text(encoding="utf-8").splitlines()
    found, files, i = [], None, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("Merged config:"):
            files = tuple(re.findall(r"`([^`]+)`", line))
        if line.startswith("|") and _cells(line) == HEADER:
            if not files:
                raise ValueError(f"{doc}:{i + 1}: a settings table without a 'Merged config:' line above it")
            rows, i = [], i + 2  # skip the |---| line
            while i < len(lines) and lines[i].startswith("|"):
                cells = _cells(lines[i])
                if len(cells) != len(HEADER):
                    raise ValueError(f"{doc}:{i + 1}: {len(cells)} cells, expected {len(HEADER)}")
                rows.append({**dict(zip(HEADER, cells)), "line": i + 1})
                i += 1
            found.append(AuditedTable(files, tuple(rows)))
            files = None
            continue
        i += 1
    return found


def stated_value(row: dict[str, Any], doc: str | Path = "docs/paper_settings.md"):
    """The backticked value that starts the row's "Paper scale" cell, read as YAML (``MISSING`` for a row without
    a config key)."""
    import yaml

    if row["Config key"] in NO_KEY:
        return MISSING
    match = re.match(r"`([^`]*)`", row["Paper scale"])
    if not match:
        raise ValueError(f"{doc}:{row['line']}: the Paper scale cell must start with the backticked value of "
                         f"{row['Config key']}")
    return yaml.safe_load(match.group(1))


def lookup(config: dict, key: str):
    """The value at a dotted key (a number indexes a list), or ``MISSING``."""
    node = config
    for part in key.split("."):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return MISSING
    return node


def engine_default(key: str):
    """A training block's field that no config file sets: the training engine's default (``MISSING`` if the key is
    no training field)."""
    from multivec.training.engine import TrainConfig

    parent, _, field = key.rpartition(".")
    defaults = {f.name: f.default for f in dataclasses.fields(TrainConfig)}
    if not (parent == "train" or parent.endswith(".train")) or field not in defaults:
        return MISSING
    return defaults[field]


def same(a, b) -> bool:
    """Equal as config values: numbers by value (1e-12 relative), lists and mappings element by element, the rest
    with their type (True is not 1)."""
    if isinstance(a, float) or isinstance(b, float):
        return (isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool)
                and not isinstance(b, bool) and math.isclose(a, b, rel_tol=1e-12))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b and type(a) is type(b)


def run_value(config: dict, key: str):
    value = lookup(config, key)
    return engine_default(key) if value is MISSING else value


def differences(config: dict, doc: str | Path) -> list[str]:
    """One line per audited paper-scale setting whose value in ``config`` is not the table's: the key, this run's
    value, the table's, and the paper's. Empty unless ``config`` is at paper scale (the other scales differ by
    design) and when the document is not there (a copy of the workflow without docs/)."""
    if config.get("scale") != "paper" or not Path(doc).is_file():
        return []
    table = next((t for t in audited_tables(doc) if t.files == PAPER_FILES), None)
    if table is None:
        raise ValueError(f"{doc}: no table for the merge {' + '.join(PAPER_FILES)}")
    lines = []
    for row in table.rows:
        stated = stated_value(row, doc)
        if stated is MISSING:
            continue
        key = row["Config key"].strip("`")
        ours = run_value(config, key)
        if ours is MISSING or not same(stated, ours):
            shown = "not set" if ours is MISSING else repr(ours)
            lines.append(f"{key} ({row['Work']}, {row['Setting']}): this run {shown}, paper scale {stated!r} "
                         f"(paper: {row['Paper / authors']})")
    return lines
