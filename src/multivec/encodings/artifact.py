"""The encodings artifact: per-document sets of vectors, written by every encoder.

A folder with
- ``vectors.safetensors``: ``vectors`` (total_vectors × d, float16 on disk to keep
  token-level encodings small; cosine scores do not need more) and ``offsets``
  (n_docs + 1, int64): document i owns rows ``offsets[i]:offsets[i+1]``;
- ``documents.jsonl``: one row a document, in the same order: ``id``, ``n_vectors`` and
  whatever the encoder adds (NUGGET: ``nugget_indices``, ``nugget_tokens``, ``scores``);
- ``info.json``: what produced it (encoder, model, task, dtype, dimension) and ``truncation``:
  the input length used, the encoder's position limit, and how many documents and tokens
  were cut (``truncation_summary``).

Documents are encoded whole up to the encoder's position limit (``encoder_token_limit``:
512 subwords for MiniLM/BERT, 1024 for mBART), as NUGGET §6.1 encodes documents and BM25
reads them whole; ``resolve_max_tokens`` turns a configured length (None = the limit) into
the length used and refuses one the encoder cannot take.

``python -m multivec inspect FOLDER`` prints a summary and a few documents.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from multivec.io import MalformedInputError, read_json, read_jsonl, write_json, write_jsonl


# Position slots a model type keeps for itself: RoBERTa-style position ids start after padding_idx.
_POSITION_OFFSET_BY_PAD_ID = {"roberta", "xlm-roberta", "camembert", "longformer", "mpnet"}


def encoder_token_limit(hf_config) -> int:
    """The most input tokens (special tokens included) the encoder's position embeddings can take.

    BERT/MiniLM: ``max_position_embeddings`` (512). mBART/BART: ``max_position_embeddings`` (1024): the
    library's learned positions add their offset of 2 themselves. RoBERTa-style models lose
    ``pad_token_id + 1`` slots (514 → 512).
    """
    limit = getattr(hf_config, "max_position_embeddings", None)
    if not isinstance(limit, int) or limit < 1:
        raise ValueError(f"{getattr(hf_config, 'model_type', type(hf_config).__name__)!r} config has no "
                         "max_position_embeddings: give table2.max_tokens explicitly")
    if getattr(hf_config, "model_type", None) in _POSITION_OFFSET_BY_PAD_ID:
        limit -= (hf_config.pad_token_id or 0) + 1
    return limit


def resolve_max_tokens(requested: int | None, limit: int, where: str = "max_tokens") -> int:
    """The input length to encode with: ``requested``, or the encoder's ``limit`` when None.

    A length above the limit would index past the position embeddings, so it is refused.
    """
    if requested is None:
        return limit
    if isinstance(requested, bool) or not isinstance(requested, int) or requested < 1:
        raise ValueError(f"{where} must be a positive integer or null (the encoder's limit), not {requested!r}")
    if requested > limit:
        raise ValueError(f"{where}={requested} exceeds the encoder's position limit of {limit} tokens; "
                         f"use null for the limit")
    return requested


def truncation_summary(full_lengths: Sequence[int], kept_lengths: Sequence[int], max_tokens: int,
                       limit: int) -> dict[str, Any]:
    """How much truncation at ``max_tokens`` cost: documents cut and tokens lost (special tokens counted)."""
    full = np.asarray(full_lengths, dtype=np.int64)
    kept = np.asarray(kept_lengths, dtype=np.int64)
    if full.shape != kept.shape or (kept > full).any():
        raise ValueError("kept lengths must match the full lengths one to one and not exceed them")
    lost = int((full - kept).sum())
    total = int(full.sum())
    cut = int((kept < full).sum())
    return {"max_tokens": int(max_tokens), "encoder_limit": int(limit), "documents": int(len(full)),
            "truncated_documents": cut, "truncated_share": cut / len(full) if len(full) else 0.0,
            "tokens": total, "tokens_lost": lost, "tokens_lost_share": lost / total if total else 0.0,
            "longest_document": int(full.max()) if len(full) else 0}


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
    from multivec.io.safe_loading import read_safetensors

    out = Path(out_dir)
    tensors = read_safetensors(out / "vectors.safetensors", framework="numpy")
    flat, offsets = tensors["vectors"].astype(np.float32), tensors["offsets"]
    documents = read_jsonl(out / "documents.jsonl")
    if len(documents) + 1 != len(offsets):
        raise MalformedInputError(out / "documents.jsonl", None,
                                  f"{len(documents)} rows but vectors.safetensors has {len(offsets) - 1} documents")
    vectors = [flat[offsets[i]:offsets[i + 1]] for i in range(len(documents))]
    info = read_json(out / "info.json") if (out / "info.json").exists() else {}
    return Encodings([d["id"] for d in documents], vectors, documents, info)
