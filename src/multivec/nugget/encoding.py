"""Documents to nuggets: the trained encoder as a multi-vector text encoder (paper §3, eq. 4; §5 uses).

``encode_documents`` returns, per document, the nuggets Z = W^V X_selected (k = ceil(n·r) vectors in
token order), which source tokens were chosen, and their scores; for ``bottleneck: mean`` one vector.
``write_nugget_encodings`` stores them as the pipeline's encodings artifact (``multivec.encodings``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch
from tqdm import tqdm

from multivec.encodings import write_encodings
from multivec.nugget.modeling import NuggetModel


@dataclass
class EncodedDocument:
    vectors: np.ndarray  # k × d float32
    nugget_indices: list[int] | None  # source token positions (None for the mean bottleneck)
    nugget_tokens: list[str] | None  # the source tokens at those positions
    scores: list[float] | None  # scorer outputs of the chosen tokens (None without a learned scorer)
    n_tokens: int  # source tokens after truncation, special tokens included

    def row(self) -> dict[str, Any]:
        """The fields this document adds to ``documents.jsonl``."""
        row: dict[str, Any] = {"n_tokens": self.n_tokens}
        if self.nugget_indices is not None:
            row.update(nugget_indices=self.nugget_indices, nugget_tokens=self.nugget_tokens, scores=self.scores)
        return row


def encode_documents(model: NuggetModel, texts: Sequence[str], batch_size: int = 32,
                     max_tokens: int = 256) -> list[EncodedDocument]:
    """Encode ``texts`` (truncated to ``max_tokens`` source tokens) in length-sorted batches.

    Puts the model in eval mode; results come back in the order of ``texts``.
    """
    if not texts:
        return []
    model.eval()
    sources = model.tokenize_sources(texts, max_tokens)
    order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
    results: list[EncodedDocument | None] = [None] * len(sources)
    device = next(model.parameters()).device
    with torch.inference_mode():
        for start in tqdm(range(0, len(order), batch_size), desc="encoding", unit="batch"):
            chunk = order[start:start + batch_size]
            ids, mask = model.collate_sources([sources[i] for i in chunk])
            nuggets = model.encode(ids.to(device), mask.to(device))
            vectors = nuggets.vectors.float().cpu().numpy()
            counts = nuggets.mask.sum(dim=1).tolist()
            for row, doc in enumerate(chunk):
                k = counts[row]
                indices = tokens = scores = None
                if nuggets.indices is not None:
                    indices = nuggets.indices[row, :k].tolist()
                    tokens = model.source_tokenizer.convert_ids_to_tokens([sources[doc][i] for i in indices])
                if nuggets.scores is not None:
                    scores = [round(float(s), 5) for s in nuggets.scores[row, :k].tolist()]
                results[doc] = EncodedDocument(vectors[row, :k].copy(), indices, tokens, scores, len(sources[doc]))
    return results  # type: ignore[return-value]


def write_nugget_encodings(out_dir: str | os.PathLike, ids: Sequence[str], texts: Sequence[str], model: NuggetModel,
                           batch_size: int = 32, info: dict[str, Any] | None = None, max_tokens: int = 256) -> None:
    """Encode and write the encodings artifact (vectors, per-document nugget positions/tokens/scores, info)."""
    if len(ids) != len(texts):
        raise ValueError(f"{len(ids)} ids but {len(texts)} texts")
    documents = encode_documents(model, texts, batch_size, max_tokens)
    meta = {**model.describe(), "max_tokens": max_tokens, **(info or {})}
    write_encodings(out_dir, ids, [d.vectors for d in documents], [d.row() for d in documents], meta)
