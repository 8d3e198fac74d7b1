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


# Elements of one chunk's (..., I, J) similarity tensor: a cache-sized block. One big broadcast product over a
# whole batch (e.g. 16 queries x 20 candidates x 256 x 256 = 84 MB) spends its time writing and re-reading
# memory; chunks along the first leading dimension keep it in cache and give the same values (each (I, J)
# block is the same matrix product either way). benchmarks/maxsim_speed.py measures it.
CHUNK_ELEMENTS = 1 << 21


def maxsim_mean(query_vecs, query_mask, doc_vecs, doc_mask, normalized: bool = False) -> torch.Tensor:
    """Eq. 10 for every broadcast (query, document) pair; returns the leading-shape tensor of scores.

    ``normalized=True`` skips L2 normalisation when the caller has already done it.
    """
    q, d = _tensor(query_vecs), _tensor(doc_vecs)
    q_mask, d_mask = _tensor(query_mask, torch.bool), _tensor(doc_mask, torch.bool)
    if not bool(q_mask.any(dim=-1).all()) or not bool(d_mask.any(dim=-1).all()):
        raise ValueError("every query and document needs at least one unmasked vector")
    lead = torch.broadcast_shapes(q.shape[:-2], d.shape[:-2])
    per_item = (q.shape[-2] * d.shape[-2] * int(np.prod(lead[1:], dtype=np.int64))) if lead else 0
    if lead and q.dim() == d.dim() == q_mask.dim() + 1 == d_mask.dim() + 1 and lead[0] > 1 \
            and per_item * lead[0] > CHUNK_ELEMENTS:
        step = max(1, CHUNK_ELEMENTS // max(per_item, 1))

        def part(x, start):
            return x if x.shape[0] == 1 else x[start:start + step]

        if not normalized and q.shape[0] == 1:
            q, normalized_q = normalize(q), True
        else:
            normalized_q = normalized
        return torch.cat([_maxsim_mean(part(q, s), part(q_mask, s), part(d, s), part(d_mask, s), normalized_q,
                                       normalized) for s in range(0, lead[0], step)])
    return _maxsim_mean(q, q_mask, d, d_mask, normalized, normalized)


def _maxsim_mean(q: torch.Tensor, q_mask: torch.Tensor, d: torch.Tensor, d_mask: torch.Tensor,
                 q_normalized: bool, d_normalized: bool) -> torch.Tensor:
    # normalised per chunk: the same values as normalising the whole batch first, without its full-size copy
    if not q_normalized:
        q = normalize(q)
    if not d_normalized:
        d = normalize(d)
    similarity = q @ d.transpose(-1, -2)                                  # (..., I, J)
    similarity.masked_fill_(~d_mask.unsqueeze(-2), float("-inf"))
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
    lengths = np.array([len(v) for v in vector_sets], dtype=np.int64)
    dim = np.asarray(vector_sets[0]).shape[-1]
    out = torch.zeros(len(vector_sets), int(lengths.max()), dim, dtype=dtype)
    mask = torch.arange(out.shape[1]).unsqueeze(0) < torch.from_numpy(lengths).unsqueeze(1)
    if all(isinstance(v, np.ndarray) for v in vector_sets):
        # one concatenation and one scatter instead of a tensor copy per set (the same values)
        flat = _tensor(np.concatenate([v.reshape(-1, dim) for v in vector_sets]), dtype)
        out[mask] = flat
    else:
        for i, vectors in enumerate(vector_sets):
            out[i, :lengths[i]] = _tensor(vectors, dtype)
    return out, mask
