"""The one metrics module shared by all three works (NUGGET, the sub-sentence encoder, the distilled
document embeddings):

- ``ranking``: where the gold results land in a ranking: MRR (NUGGET Table 2 and the distillation's ranking
  tasks), P@1 and R@k (the sub-sentence encoder's atomic-fact retrieval);
- ``maxsim``: the vector similarities that rank candidates: MaxSim of vector sets (NUGGET eq. 10), the
  broadcast ``cosine`` and the all-pairs ``cosine_matrix``.

Names load from their submodule on first use (``multivec.pipeline.lazy_exports``): the tables read rankings with
``multivec.metrics.ranking`` (numpy) and must not load torch, which only the similarities need."""

from multivec.pipeline.lazy_exports import lazy_exports

_WHERE = {
    "cosine": "maxsim", "cosine_matrix": "maxsim", "maxsim_mean": "maxsim", "pad_vector_sets": "maxsim",
    "mrr_at": "ranking", "precision_at_1": "ranking", "precision_recall_at": "ranking", "ranks_of_answers": "ranking",
    "recall_at_k": "ranking", "reciprocal_ranks": "ranking",
}

__all__ = sorted(_WHERE)

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
