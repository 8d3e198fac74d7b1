"""What a trained model folder of this project is, and the one error every export raises.

Each kind of folder the pipeline writes is recognised by the files it holds and by the shape of its
``config.json`` (``detect_kind``):

- ``student``: a distilled student (``multivec.distill.training``): ``config.json`` with ``model.student``,
  ``model.loss`` and ``derived``, and ``model.safetensors``;
- ``nugget`` / ``tsdae``: a NUGGET zoo model (``multivec.nugget.modeling``): ``config.json`` with ``model``
  (a ``NuggetConfig``; ``bottleneck: mean`` is TSDAE), ``backbone/``, ``source_tokenizer/``,
  ``target_tokenizer/`` and ``model.safetensors``;
- ``subencoder``: a sub-sentence encoder (``multivec.subencoder.model``): ``config.json`` with ``model``
  (a ``SubEncoderConfig``), ``backbone/`` and ``model.safetensors``;
- ``teacher``: a structural teacher, a sentence-transformers folder (``modules.json``).

A folder that misses a file, or that an older version wrote in another layout (a ``config.json`` without
the keys this version reads), raises ``ExportError`` naming the folder and the file; it is a
``MalformedInputError``, so the command line prints it as one ``error:`` line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

from multivec.io import MalformedInputError

KINDS = ("student", "teacher", "tsdae", "nugget", "subencoder")

# Files each kind needs (folders end with "/").
REQUIRED_FILES = {
    "student": ("config.json", "model.safetensors"),
    "nugget": ("config.json", "model.safetensors", "backbone/", "source_tokenizer/"),
    "tsdae": ("config.json", "model.safetensors", "backbone/", "source_tokenizer/"),
    "subencoder": ("config.json", "model.safetensors", "backbone/"),
    "teacher": ("modules.json",),
}
# Keys of config.json each kind needs (dotted paths).
REQUIRED_KEYS = {
    "student": ("model.student", "model.loss", "derived.structural_dim", "derived.contextual_dim"),
    "nugget": ("model.bottleneck", "model.ratio", "model.scorer_layer"),
    "tsdae": ("model.bottleneck",),
    "subencoder": ("model.encoder", "model.head", "model.max_tokens"),
    "teacher": (),
}


class ExportError(MalformedInputError):
    """A model folder that cannot be exported or loaded; the message names the folder and the file."""

    def __init__(self, path: str | os.PathLike, what: str):
        super().__init__(path, None, what)


def require_files(folder: str | os.PathLike, kind: str, names: Iterable[str] | None = None) -> Path:
    """``folder`` as a Path, once every file (``name``) or folder (``name/``) a ``kind`` folder needs is there."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ExportError(folder, f"no such model folder (expected a {kind} folder)")
    for name in names if names is not None else REQUIRED_FILES[kind]:
        path = folder / name.rstrip("/")
        present = path.is_dir() if name.endswith("/") else path.is_file()
        if not present:
            raise ExportError(path, f"missing: a {kind} model folder ({folder}) needs {name} "
                                    f"(all of: {', '.join(REQUIRED_FILES.get(kind, names or ()))}); "
                                    "was it written by an older version, or is the training unfinished?")
    return folder


def read_config(folder: str | os.PathLike) -> dict[str, Any]:
    """The folder's ``config.json`` as a dict (an ``ExportError`` naming the file when absent or not JSON)."""
    path = Path(folder) / "config.json"
    if not path.is_file():
        raise ExportError(path, f"missing: {folder} holds no config.json")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ExportError(path, f"not valid JSON ({err})") from None
    if not isinstance(data, dict):
        raise ExportError(path, "must hold a JSON object")
    return data


def _lookup(data: dict[str, Any], dotted: str) -> bool:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def require_keys(folder: str | os.PathLike, kind: str, config: dict[str, Any] | None = None) -> dict[str, Any]:
    """The folder's ``config.json`` once it has every key a ``kind`` folder of this version holds."""
    config = read_config(folder) if config is None else config
    missing = [key for key in REQUIRED_KEYS[kind] if not _lookup(config, key)]
    if missing:
        raise ExportError(Path(folder) / "config.json",
                          f"no {', '.join(missing)}: not a {kind} model folder of this version (an older layout?)")
    return config


def detect_kind(folder: str | os.PathLike) -> str:
    """Which kind of model folder ``folder`` is (one of ``KINDS``), from its files and ``config.json``."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ExportError(folder, "no such model folder")
    if (folder / "modules.json").is_file():
        return "teacher"
    config = read_config(folder)
    model = config.get("model")
    if isinstance(model, dict):
        if "student" in model:
            return "student"
        if "bottleneck" in model:
            return "tsdae" if model["bottleneck"] == "mean" else "nugget"
        if "head" in model:
            return "subencoder"
    raise ExportError(folder / "config.json", "cannot tell the model kind: its 'model' section has none of "
                                              "'student' (distilled student), 'bottleneck' (NUGGET/TSDAE) or "
                                              "'head' (SubEncoder); pass --kind, or re-train with this version")
