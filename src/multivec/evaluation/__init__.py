"""Shared evaluation: the PI and RR ranking tasks scored by encodings or BM25, MRR×100
(``ranking_evaluation``), used by NUGGET's Tables 2 and 4 (``multivec.nugget.tables``) and by the
distillation work (``multivec.distill.evaluation.demo_tasks``); the document tasks Lee and polarity for any
representation, single- or multi-vector (``document_tasks``); the representation matrix of every
representation against every task (``representation_matrix``); and the inspectors of what it and the results
tables write (``inspector``).

Names load on first use (PEP 562), so importing the package alone loads no heavy library.
"""

from __future__ import annotations

from multivec.pipeline.lazy_exports import lazy_exports

_WHERE = {"RankingResult": "ranking_evaluation", "evaluate_with_bm25": "ranking_evaluation",
          "evaluate_with_encodings": "ranking_evaluation"}

__all__ = sorted(_WHERE)

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
