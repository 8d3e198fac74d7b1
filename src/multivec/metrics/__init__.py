"""Metrics for Table 2: MRR over candidates, and the set/vector similarities that rank them."""

from multivec.metrics.maxsim import cosine, maxsim_mean, pad_vector_sets
from multivec.metrics.ranking import mrr_at, ranks_of_answers, reciprocal_ranks

__all__ = ["cosine", "maxsim_mean", "pad_vector_sets", "mrr_at", "ranks_of_answers", "reciprocal_ranks"]
