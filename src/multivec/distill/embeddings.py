"""The embeddings artifact of the distillation work (Burian 2023, §3.2: teacher embeddings;
§5: the embeddings every evaluation task scores).

One folder per model and document set:

- ``embeddings.safetensors``: one float32 tensor ``embeddings`` of shape [N, d];
- ``ids.txt``: the N document ids, one a line, in the tensor's row order;
- ``meta.json``: at least ``model``, ``dimension`` (d) and ``n`` (N); teachers add
  ``truncated_share`` and their settings.

Both the teachers' and the student's rules write through ``write_embeddings`` and every reader
goes through ``read_embeddings``, which checks that the three files agree.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from multivec.io import MalformedInputError

TENSOR = "embeddings"
FILES = ("embeddings.safetensors", "ids.txt", "meta.json")


def write_embeddings(folder: str | os.PathLike, ids: list[str], vectors: np.ndarray, meta: dict) -> Path:
    """Write ``vectors`` ([N, d]) with their ``ids`` and ``meta`` (``dimension`` and ``n`` are set here)."""
    from safetensors.numpy import save_file

    folder = Path(folder)
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2:
        raise ValueError(f"{folder}: embeddings must be a 2-d array [N, d], got shape {vectors.shape}")
    ids = [str(i) for i in ids]
    if len(ids) != vectors.shape[0]:
        raise ValueError(f"{folder}: {len(ids)} ids for {vectors.shape[0]} embeddings")
    if len(set(ids)) != len(ids):
        raise ValueError(f"{folder}: duplicate document ids")
    if any(("\n" in i) or not i for i in ids):
        raise ValueError(f"{folder}: ids must be non-empty and hold no newline")
    if not np.isfinite(vectors).all():
        raise ValueError(f"{folder}: embeddings contain NaN or infinite values")
    folder.mkdir(parents=True, exist_ok=True)
    save_file({TENSOR: np.ascontiguousarray(vectors)}, str(folder / "embeddings.safetensors"))
    (folder / "ids.txt").write_text("".join(i + "\n" for i in ids), encoding="utf-8")
    full_meta = {**meta, "dimension": int(vectors.shape[1]), "n": int(vectors.shape[0])}
    (folder / "meta.json").write_text(json.dumps(full_meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return folder


def read_embeddings(folder: str | os.PathLike) -> tuple[list[str], np.ndarray, dict]:
    """``(ids, vectors [N, d] float32, meta)`` of an embeddings folder; a clear error naming the file
    when a file is missing or the three disagree."""
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    folder = Path(folder)
    for name in FILES:
        if not (folder / name).is_file():
            raise FileNotFoundError(f"{folder / name}: missing (an embeddings folder holds {', '.join(FILES)})")
    tensor_path = folder / "embeddings.safetensors"
    try:
        tensors = load_file(str(tensor_path))
    except (SafetensorError, OSError, ValueError) as err:
        raise MalformedInputError(tensor_path, None, f"not a readable safetensors file ({err})") from None
    if TENSOR not in tensors:
        raise MalformedInputError(tensor_path, None, f"no tensor {TENSOR!r} (has {', '.join(sorted(tensors))})")
    vectors = tensors[TENSOR].astype(np.float32, copy=False)
    if vectors.ndim != 2:
        raise MalformedInputError(tensor_path, None, f"{TENSOR!r} has shape {vectors.shape}, expected [N, d]")
    ids = (folder / "ids.txt").read_text(encoding="utf-8").splitlines()
    if len(ids) != vectors.shape[0]:
        raise MalformedInputError(folder / "ids.txt", None,
                                  f"{len(ids)} ids but {tensor_path.name} has {vectors.shape[0]} rows")
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise MalformedInputError(folder / "meta.json", err.lineno, f"invalid JSON: {err.msg}") from None
    if not isinstance(meta, dict):
        raise MalformedInputError(folder / "meta.json", None, "must hold a JSON object")
    for key, expected in (("dimension", vectors.shape[1]), ("n", vectors.shape[0])):
        if key in meta and meta[key] != expected:
            raise MalformedInputError(folder / "meta.json", None, f"{key}={meta[key]} but the tensor says {expected}")
    return ids, vectors, meta


def read_meta(folder: str | os.PathLike) -> dict:
    """The ``meta.json`` of an embeddings folder alone (``dimension``, ``n``, what wrote it): what a table reads,
    from the folder or from its committed copy (``multivec.io.committed_inputs``), which holds no vectors."""
    path = Path(folder) / "meta.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing (an embeddings folder's meta.json)")
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise MalformedInputError(path, err.lineno, f"invalid JSON: {err.msg}") from None
    if not isinstance(meta, dict):
        raise MalformedInputError(path, None, "must hold a JSON object")
    return meta


def vectors_for(folder: str | os.PathLike, wanted_ids: list[str]) -> np.ndarray:
    """The rows of ``folder``'s embeddings for ``wanted_ids``, in that order (an error names missing ids)."""
    ids, vectors, _ = read_embeddings(folder)
    index = {doc_id: row for row, doc_id in enumerate(ids)}
    missing = [i for i in wanted_ids if i not in index]
    if missing:
        raise KeyError(f"{folder}: no embedding for {len(missing)} document(s), e.g. {missing[:3]}")
    return vectors[[index[i] for i in wanted_ids]]
