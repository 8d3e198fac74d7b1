"""The registry behind ``python -m multivec inspect PATH``: artifact types and how to recognise them.

Each artifact's module owns its inspector, in a file beside the code that writes the artifact
(``multivec/nugget/inspector.py`` for models, ``multivec/tasks/inspector.py`` for ranking tasks,
...). An inspector is a function registered with ::

    @inspector("encodings", "per-document vector sets ...", matches=is_dir_with("vectors.safetensors"),
               priority=90)
    def inspect_encodings(path: Path, report: Report) -> None: ...

``matches(path)`` recognises the artifact from its path (a file's name, extension or first
line; a folder's files). When several inspectors match, the highest ``priority`` wins:
90-60 for artifacts recognised by their content or files, 40 for binary formats recognised
by extension, 10 for generic JSON/JSONL/CSV/TSV/text, 0 for any folder. So a new,
unknown JSON or CSV output (a counts sidecar, a results table) is still shown sensibly.

The modules holding inspectors are imported here, explicitly, from ``INSPECTOR_MODULES``:
which inspectors exist never depends on what else happened to be imported first.
After the inspector, ``inspect_path`` prints any metadata sidecar of the artifact
(``<name>.meta.json``, ``<stem>.meta.json``, or ``meta.json`` inside a folder).
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TextIO

from multivec.inspection.common import InspectError, Report, read_json_checked, short_json

# Every module that registers inspectors. A new artifact family adds its module here.
INSPECTOR_MODULES = (
    "multivec.inspection.generic",
    "multivec.data.inspector",
    "multivec.tasks.inspector",
    "multivec.nugget.inspector",
    "multivec.encodings.inspector",
    "multivec.evaluation.inspector",
    "multivec.pipeline.inspector",
    "multivec.subencoder.inspector",
    "multivec.distill.inspector",
    "multivec.distill.student_inspector",
    "multivec.statistics.inspector",
)


@dataclass(frozen=True)
class Inspector:
    name: str
    description: str
    matches: Callable[[Path], bool]
    inspect: Callable[[Path, Report], None]
    priority: int
    module: str


_REGISTRY: dict[str, Inspector] = {}


def inspector(name: str, description: str, matches: Callable[[Path], bool], priority: int = 50):
    """Decorator registering ``function(path, report)`` as the inspector of artifact type ``name``."""

    def wrap(function: Callable[[Path, Report], None]):
        entry = Inspector(name, description, matches, function, priority, function.__module__)
        known = _REGISTRY.get(name)
        if known is not None and (known.module, known.inspect.__qualname__) != (entry.module, function.__qualname__):
            raise ValueError(f"inspector {name!r} registered twice: by {known.module} and {entry.module}")
        _REGISTRY[name] = entry
        return function

    return wrap


def load_inspectors() -> None:
    """Import every module of ``INSPECTOR_MODULES`` (each registers its inspectors once)."""
    for module in INSPECTOR_MODULES:
        importlib.import_module(module)


def inspectors() -> list[Inspector]:
    """All inspectors, most specific (highest priority) first."""
    load_inspectors()
    return sorted(_REGISTRY.values(), key=lambda t: (-t.priority, t.name))


def get(name: str) -> Inspector:
    load_inspectors()
    if name not in _REGISTRY:
        raise KeyError(f"no inspector named {name!r}; known: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name]


def supported_types() -> str:
    return "\n".join(f"  - {t.name}: {t.description}" for t in inspectors())


def matching(path: str | os.PathLike) -> list[Inspector]:
    """Every inspector that recognises ``path``, the one ``detect`` picks first."""
    path = Path(path)
    return [t for t in inspectors() if t.matches(path)]


def detect(path: str | os.PathLike) -> Inspector:
    """The inspector for ``path``: the highest-priority one that recognises it."""
    path = Path(path)
    if not path.exists():
        raise InspectError(f"{path}: no such file or folder")
    for candidate in inspectors():
        if candidate.matches(path):
            return candidate
    raise InspectError(f"{path}: not an artifact that inspect knows. Supported:\n{supported_types()}")


def sidecars(path: Path) -> list[Path]:
    """Metadata files that describe ``path``: ``<name>.meta.json`` beside it, ``<stem>.meta.json``
    beside a file, and ``meta.json`` / ``*.meta.json`` directly inside a folder."""
    if not path.name:  # "." or a path ending in ".."
        path = path.resolve()
    if path.name.endswith(".meta.json"):
        return []
    found = [path.with_name(path.name + ".meta.json")]
    if path.is_dir():
        found += [path / "meta.json", *sorted(path.glob("*.meta.json"))]
    else:
        found.append(path.with_name(path.stem + ".meta.json"))
    unique: list[Path] = []
    for candidate in found:
        if candidate.is_file() and candidate not in unique:
            unique.append(candidate)
    return unique


def print_metadata(path: Path, report: Report) -> None:
    """A sidecar's content, one ``key: value`` a line (nested objects one level deep)."""
    value = read_json_checked(path)
    report.line(f"metadata ({path.name}):")
    if not isinstance(value, dict):
        report.line(f"  {short_json(value, 300)}")
        return
    for key, item in value.items():
        if isinstance(item, dict) and item and all(not isinstance(v, (dict, list)) for v in item.values()):
            report.line(f"  {key}: " + ", ".join(f"{k}={v}" for k, v in item.items()))
        else:
            report.line(f"  {key}: {short_json(item)}")


def inspect_path(path: str | os.PathLike, n: int = 3, out: TextIO | None = None, tokenizer: str | None = None) -> str:
    """Print what the artifact at ``path`` is and what is in it; returns its type name."""
    report = Report(out or sys.stdout, n, tokenizer)
    path = Path(path)
    artifact = detect(path)
    report.line(f"{path}: {artifact.name} ({artifact.description})")
    artifact.inspect(path, report)
    for sidecar in sidecars(path):
        print_metadata(sidecar, report)
    return artifact.name
