"""sentence-transformers modules for a distilled student that reads a document in chunks (Burian 2023, demo scale).

The demo student (``multivec.distill.student``) cuts a document's first ``max_tokens`` content tokens into pieces
of ``chunk_tokens - 2``, encodes each piece as its own sequence ([CLS] piece [SEP]) and takes the mean of every
chunk's token states, special tokens included. A plain ``Transformer`` + ``Pooling`` pipeline truncates at one
window instead, so an export of a chunked student uses two modules of this package (``modules.json`` names them,
so loading needs ``trust_remote_code=True`` and ``multivec`` installed):

- ``ChunkedTransformer``: sentence-transformers' own ``Transformer`` (same weights, tokenizer and saving), whose
  ``preprocess`` builds the chunk batch as the student's ``collate`` does and records which document each chunk
  belongs to (``chunk_document``);
- ``ChunkMeanPooling``: the mean of all token states of all chunks of a document (the student's pooling), as
  ``sentence_embedding``.

A student whose every document fits one window (``chunk_tokens`` null, or ``chunk_tokens - 2 >= max_tokens``)
exports to the library's own ``Transformer`` + ``Pooling('mean')`` instead (``multivec.interop.distill_export``).
"""

from __future__ import annotations

from typing import Any, Sequence

import torch
from sentence_transformers.base.modules import Module, Transformer

from multivec.distill.student import chunk_ids, pad_chunks

CHUNK_KEY = "chunk_document"


class ChunkedTransformer(Transformer):
    """``Transformer`` whose inputs are cut into chunks of ``chunk_tokens`` (specials included) after the first
    ``max_tokens`` content tokens, as ``multivec.distill.student.Student.collate``."""

    config_keys = [*Transformer.config_keys, "max_tokens", "chunk_tokens"]

    def __init__(self, model_name_or_path: str, *, max_tokens: int = 512, chunk_tokens: int = 256, **kwargs: Any):
        super().__init__(model_name_or_path, **kwargs)
        if chunk_tokens < 3:
            raise ValueError(f"chunk_tokens={chunk_tokens}: must be >= 3 (two special tokens)")
        self.max_tokens, self.chunk_tokens = int(max_tokens), int(chunk_tokens)
        empty = self.tokenizer("", add_special_tokens=True)["input_ids"]
        self._prefix, self._suffix = list(empty[:1]), list(empty[1:])

    def chunks(self, ids: Sequence[int]) -> list[list[int]]:
        return chunk_ids(ids, self.chunk_tokens, self._prefix, self._suffix)

    def preprocess(self, inputs, prompt: str | None = None, **kwargs: Any) -> dict[str, Any]:
        if not inputs:
            return {}
        texts = [(prompt or "") + str(text) for text in inputs]
        ids = self.tokenizer(texts, add_special_tokens=False, truncation=False, verbose=False)["input_ids"]
        input_ids, mask, owner = pad_chunks([row[: self.max_tokens] for row in ids], self.chunks,
                                            self.tokenizer.pad_token_id or 0)
        return {"input_ids": input_ids, "attention_mask": mask, CHUNK_KEY: owner, "modality": "text"}

    def forward(self, features: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        owner = features.pop(CHUNK_KEY, None)
        features = super().forward(features, **kwargs)
        if owner is not None:
            features[CHUNK_KEY] = owner
        return features


class ChunkMeanPooling(Module):
    """Per document, the mean of the token states of all its chunks over their attention masks
    (``multivec.distill.student.Student.forward``), written as ``sentence_embedding``."""

    config_keys = ["embedding_dimension"]

    def __init__(self, embedding_dimension: int):
        super().__init__()
        self.embedding_dimension = int(embedding_dimension)

    def get_embedding_dimension(self) -> int:
        return self.embedding_dimension

    def get_sentence_embedding_dimension(self) -> int:
        return self.embedding_dimension

    def forward(self, features: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        states = features["token_embeddings"]
        weights = features["attention_mask"].unsqueeze(-1).to(states.dtype)
        chunk_sums = (states * weights).sum(dim=1)
        chunk_counts = weights.sum(dim=1)
        owner = features.get(CHUNK_KEY)
        if owner is None:  # one chunk a document
            owner = torch.arange(states.shape[0], device=states.device)
        n_documents = int(owner.max()) + 1
        sums = torch.zeros(n_documents, states.shape[-1], dtype=states.dtype, device=states.device)
        counts = torch.zeros(n_documents, 1, dtype=states.dtype, device=states.device)
        sums = sums.index_add(0, owner, chunk_sums)
        counts = counts.index_add(0, owner, chunk_counts)
        features["sentence_embedding"] = sums / counts.clamp_min(1.0)
        return features

    def save(self, output_path: str, *args: Any, safe_serialization: bool = True, **kwargs: Any) -> None:
        self.save_config(output_path)
