"""Vector similarities: MaxSim of two sets of vectors (NUGGET eq. 10) and cosine.

    m(q, d) = (1/I) Σ_i max_j cos(q_i, d_j)

q_1..q_I are the query's vectors, d_1..d_J the document's (for NUGGET, nuggets; for
ColBART, token states). ``maxsim_mean`` evaluates it for padded, masked batches in one
broadcast matrix product (torch), so a query can be scored against all its candidates at
once: query (..., I, d) with mask (..., I), documents (..., J, d) with mask (..., J); the
leading dimensions broadcast (e.g. query (B, 1, I, d) against candidates (B, C, J, d)).
A zero vector has cosine 0 with everything. Every query and document needs at least one
unmasked vector.

``cosine`` is the cosine of single vectors, broadcasting their leading dimensions (elementwise
product summed); ``cosine_matrix`` is every query against every candidate as one matrix product,
(Q, d) × (C, d) -> (Q, C), with which the sub-sentence encoder ranks candidate propositions
(Chen et al. 2023, §4.2.1). The two sum in different orders, so their floats may differ in the
last bits: each caller keeps the one its results were computed with.
"""

from __future__ import annotations

import numpy as np
import torch

EPS = 1e-12


def _tensor(x, dtype=torch.float32) -> torch.Tensor:
    return x.to(dtype) if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x), dtype=dtype)


def normalize(vectors: torch.Tensor) -> torch.Tensor:
    return vectors / vectors.norm(dim=-1, keepdim=True).clamp_min(EPS)


def maxsim_mean(query_vecs, query_mask, doc_vecs, doc_mask, normalized: bool = False) -> torch.Tensor:
    """Eq. 10 for every broadcast (query, document) pair; returns the leading-shape tensor of scores.

    ``normalized=True`` skips L2 normalisation when the caller has already done it.
    """
    q, d = _tensor(query_vecs), _tensor(doc_vecs)
    q_mask, d_mask = _tensor(query_mask, torch.bool), _tensor(doc_mask, torch.bool)
    if not bool(q_mask.any(dim=-1).all()) or not bool(d_mask.any(dim=-1).all()):
        raise ValueError("every query and document needs at least one unmasked vector")
    if not normalized:
        q, d = normalize(q), normalize(d)
    similarity = q @ d.transpose(-1, -2)                                  # (..., I, J)
    similarity = similarity.masked_fill(~d_mask.unsqueeze(-2), float("-inf"))
    best = similarity.amax(dim=-1)                                        # (..., I)
    best = best.masked_fill(~q_mask, 0.0)
    return best.sum(dim=-1) / q_mask.sum(dim=-1).to(best.dtype)


def cosine(query_vecs, doc_vecs) -> torch.Tensor:
    """Cosine similarity of single vectors (..., d) × (..., d), broadcasting the leading dimensions."""
    q, d = normalize(_tensor(query_vecs)), normalize(_tensor(doc_vecs))
    return (q * d).sum(dim=-1)


def cosine_matrix(queries: torch.Tensor, candidates: torch.Tensor) -> torch.Tensor:
    """(Q, C) cosine similarities of query vectors (Q, d) and candidate vectors (C, d), in float32."""
    q = torch.nn.functional.normalize(queries.float(), dim=-1)
    c = torch.nn.functional.normalize(candidates.float(), dim=-1)
    return q @ c.T


def pad_vector_sets(vector_sets, dtype=torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack (n_i × d) arrays into a zero-padded (N, max n_i, d) tensor and its (N, max n_i) mask."""
    if len(vector_sets) == 0:
        raise ValueError("no vector sets to pad")
    lengths = [len(v) for v in vector_sets]
    dim = np.asarray(vector_sets[0]).shape[-1]
    out = torch.zeros(len(vector_sets), max(lengths), dim, dtype=dtype)
    mask = torch.zeros(len(vector_sets), max(lengths), dtype=torch.bool)
    for i, vectors in enumerate(vector_sets):
        out[i, :lengths[i]] = _tensor(vectors, dtype)
        mask[i, :lengths[i]] = True
    return out, mask
