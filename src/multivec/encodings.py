"""The encodings artifact: per-document sets of vectors, written by every encoder.

A folder with
- ``vectors.safetensors``: ``vectors`` (total_vectors × d, float16 on disk to keep
  token-level encodings small; cosine scores do not need more) and ``offsets``
  (n_docs + 1, int64): document i owns rows ``offsets[i]:offsets[i+1]``;
- ``documents.jsonl``: one row a document, in the same order: ``id``, ``n_vectors`` and
  whatever the encoder adds (NUGGET: ``nugget_indices``, ``nugget_tokens``, ``scores``);
- ``info.json``: what produced it (encoder, model, task, dtype, dimension).

``python -m multivec inspect FOLDER`` prints a summary and a few documents.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from multivec.io import MalformedInputError, read_json, read_jsonl, write_json, write_jsonl


@dataclass
class Encodings:
    ids: list[str]
    vectors: list[np.ndarray]  # one (n_vectors_i × d) float32 array per document
    documents: list[dict[str, Any]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)

    def by_id(self) -> dict[str, np.ndarray]:
        return dict(zip(self.ids, self.vectors))


def write_encodings(out_dir: str | os.PathLike, ids: Sequence[str], vectors: Sequence[np.ndarray],
                    documents: Sequence[dict[str, Any]] | None = None, info: dict[str, Any] | None = None) -> None:
    from safetensors.numpy import save_file

    if len(ids) != len(vectors):
        raise ValueError(f"{len(ids)} ids but {len(vectors)} vector sets")
    if documents is not None and len(documents) != len(ids):
        raise ValueError(f"{len(ids)} ids but {len(documents)} document rows")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    arrays = [np.asarray(v, dtype=np.float32).reshape(len(v), -1) for v in vectors]
    dim = arrays[0].shape[1] if arrays else 0
    for doc_id, array in zip(ids, arrays):
        if array.shape[1] != dim or array.shape[0] == 0:
            raise ValueError(f"document {doc_id!r}: vectors of shape {array.shape}, expected (>0, {dim})")
    offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([a.shape[0] for a in arrays])
    flat = np.concatenate(arrays).astype(np.float16) if arrays else np.zeros((0, 0), np.float16)
    save_file({"vectors": flat, "offsets": offsets}, str(out / "vectors.safetensors"))
    rows = []
    for i, (doc_id, array) in enumerate(zip(ids, arrays)):
        row = {"id": doc_id, "n_vectors": int(array.shape[0])}
        if documents is not None:
            row.update(documents[i])
        rows.append(row)
    write_jsonl(out / "documents.jsonl", rows)
    write_json(out / "info.json", {"n_documents": len(ids), "dimension": int(dim), "dtype_on_disk": "float16",
                                   "total_vectors": int(offsets[-1]), **(info or {})})


def read_encodings(out_dir: str | os.PathLike) -> Encodings:
    from safetensors.numpy import load_file

    out = Path(out_dir)
    tensors = load_file(str(out / "vectors.safetensors"))
    flat, offsets = tensors["vectors"].astype(np.float32), tensors["offsets"]
    documents = read_jsonl(out / "documents.jsonl")
    if len(documents) + 1 != len(offsets):
        raise MalformedInputError(out / "documents.jsonl", None,
                                  f"{len(documents)} rows but vectors.safetensors has {len(offsets) - 1} documents")
    vectors = [flat[offsets[i]:offsets[i + 1]] for i in range(len(documents))]
    info = read_json(out / "info.json") if (out / "info.json").exists() else {}
    return Encodings([d["id"] for d in documents], vectors, documents, info)
