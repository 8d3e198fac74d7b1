"""Metrics for Table 2: MRR over candidates, and the set/vector similarities that rank them.

Names load from their submodule on first use (``multivec.pipeline.lazy_exports``): the tables read rankings with
``multivec.metrics.ranking`` (numpy) and must not load torch, which only the similarities need."""

from multivec.pipeline.lazy_exports import lazy_exports

_WHERE = {
    "cosine": "maxsim", "maxsim_mean": "maxsim", "pad_vector_sets": "maxsim",
    "mrr_at": "ranking", "ranks_of_answers": "ranking", "reciprocal_ranks": "ranking",
}

__all__ = sorted(_WHERE)

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
