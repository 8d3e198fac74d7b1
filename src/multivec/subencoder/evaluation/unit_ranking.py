"""Ranking units for the atomic-fact retrieval task (Chen et al. 2023, §4.2.1, Tables 1, 4, 5, 8): each query's
ranking of candidate units and its P@1 and R@k, ×100. Units may be propositions (Table 1) or the sentences/
documents that hold them (Table 4: a unit's score is the max over its propositions, the top k UNIQUE units are
returned). Which candidates are left out of a query's ranking is the evaluation protocol's choice
(``multivec.subencoder.evaluation.retrieval.PROTOCOLS``).

The metrics themselves are the shared ones: P@1 and R@k of a ranking in ``multivec.metrics.ranking``
(``precision_recall_at``), the cosine of query and candidate vectors in ``multivec.metrics.maxsim``
(``cosine_matrix``).

Each query's own values are kept (``per_query_metrics``): the statistics layer's bootstrap CIs and paired
tests resample queries (``multivec.subencoder.tables.units``); the table's number is their mean.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from multivec.metrics.maxsim import cosine_matrix
from multivec.metrics.ranking import precision_recall_at

KS = (5, 10, 20)


def _unit_scores(scores: torch.Tensor, unit_of: Sequence[int] | torch.Tensor, n_units: int,
                 exclude: int | Sequence[int] | None) -> tuple[torch.Tensor, int]:
    """Each unit's score for one query (the max over its candidates, ``exclude`` left out; -inf for a unit with
    no candidate left) and how many units have a candidate left."""
    scores = scores.clone().float()
    if exclude is not None:
        scores[torch.as_tensor(exclude, dtype=torch.long)] = float("-inf")
    units = torch.as_tensor(unit_of, dtype=torch.long)
    best = torch.full((n_units,), float("-inf"))
    best.scatter_reduce_(0, units, scores, reduce="amax")
    present = torch.zeros(n_units, dtype=torch.bool)
    present[units[torch.isfinite(scores)]] = True
    best[~present] = float("-inf")
    return best, int(present.sum())


def rank_units(scores: torch.Tensor, unit_of: Sequence[int] | torch.Tensor, n_units: int,
               exclude: int | Sequence[int] | None, top: int) -> list[int]:
    """The ``top`` best units for one query. ``scores``: (C,) over candidate propositions; ``unit_of[c]``: the
    unit of candidate c (identity for proposition retrieval); candidate(s) ``exclude`` (the query) are left out.
    A unit's score is the max over its candidates; ties go to the lower unit index (a stable sort)."""
    best, present = _unit_scores(scores, unit_of, n_units, exclude)
    order = torch.argsort(-best, stable=True)
    return [int(u) for u in order[:min(top, present)]]


def ranked_unit_scores(scores: torch.Tensor, ranking: Sequence[int], unit_of: Sequence[int] | torch.Tensor,
                       n_units: int, exclude: int | Sequence[int] | None) -> list[float]:
    """The score ``rank_units`` gave each unit of ``ranking`` (same arguments): what the ranking was sorted by."""
    best, _ = _unit_scores(scores, unit_of, n_units, exclude)
    return [float(best[u]) for u in ranking]


def score_rankings(scores: torch.Tensor, query_index: Sequence[int | Sequence[int] | None],
                   unit_of: Sequence[int] | None = None, n_units: int | None = None, top: int = max(KS)
                   ) -> list[list[int]]:
    """Each query's ``top`` best units from a (Q, C) score matrix; ``query_index[q]``: the candidate(s) left
    out of query q's ranking (None: none)."""
    if len(query_index) != scores.shape[0]:
        raise ValueError(f"{scores.shape[0]} queries but {len(query_index)} query indices")
    unit_of = list(range(scores.shape[1])) if unit_of is None else list(unit_of)
    n_units = scores.shape[1] if n_units is None else n_units
    return [rank_units(scores[row], unit_of, n_units, own, top) for row, own in enumerate(query_index)]


def per_query_scores(scores: torch.Tensor, gold: Sequence[set[int]],
                     query_index: Sequence[int | Sequence[int] | None], unit_of: Sequence[int] | None = None,
                     n_units: int | None = None, ks: Sequence[int] = KS,
                     rankings: list[list[int]] | None = None) -> dict[str, list[float]]:
    """Each query's P@1 and R@k ×100 from a (Q, C) score matrix (cosine, or any similarity such as the
    lexical baseline's word Jaccard). ``gold`` holds unit indices; ``query_index[q]``: the candidate(s)
    left out of query q's ranking (the evaluation protocol's; None: none). ``rankings``, when given, receives
    each query's ranked units (the top ``max(ks)``), the lists the metrics were computed from."""
    if len(gold) != scores.shape[0] or len(query_index) != scores.shape[0]:
        raise ValueError(f"{scores.shape[0]} queries but {len(gold)} gold sets and "
                         f"{len(query_index)} query indices")
    if not len(gold):
        raise ValueError("no queries to score")
    ranked = score_rankings(scores, query_index, unit_of, n_units, max(ks))
    if rankings is not None:
        rankings.extend(ranked)
    per_query: dict[str, list[float]] = {}
    for ranking, gold_set in zip(ranked, gold):
        for name, value in precision_recall_at(ranking, gold_set, ks).items():
            per_query.setdefault(name, []).append(100 * value)
    return per_query


def per_query_metrics(query_vectors: torch.Tensor, candidate_vectors: torch.Tensor, gold: Sequence[set[int]],
                      query_index: Sequence[int | Sequence[int] | None], unit_of: Sequence[int] | None = None,
                      n_units: int | None = None, ks: Sequence[int] = KS) -> dict[str, list[float]]:
    """Each query's P@1 and R@k ×100 (the evaluation units of the statistics layer), ranking by cosine
    similarity (``per_query_scores`` of ``multivec.metrics.maxsim.cosine_matrix``)."""
    if len(gold) != query_vectors.shape[0] or len(query_index) != query_vectors.shape[0]:
        raise ValueError(f"{query_vectors.shape[0]} queries but {len(gold)} gold sets and "
                         f"{len(query_index)} query indices")
    return per_query_scores(cosine_matrix(query_vectors, candidate_vectors), gold, query_index, unit_of, n_units, ks)


def mean_metrics(per_query: dict[str, Sequence[float]]) -> dict[str, float]:
    """The table's numbers: each metric's mean over queries of ``per_query_metrics``."""
    return {name: float(np.mean(values)) for name, values in per_query.items()}


def retrieval_metrics(query_vectors: torch.Tensor, candidate_vectors: torch.Tensor, gold: Sequence[set[int]],
                      query_index: Sequence[int | Sequence[int] | None], unit_of: Sequence[int] | None = None,
                      n_units: int | None = None, ks: Sequence[int] = KS) -> dict[str, float]:
    """Mean P@1 and R@k ×100 over queries (``per_query_metrics`` averaged)."""
    return mean_metrics(per_query_metrics(query_vectors, candidate_vectors, gold, query_index, unit_of, n_units, ks))
