"""multivec: reproductions of three works that represent text by more than one vector.

The works, each in its package:

- NUGGET (Qin & Van Durme, ICML 2023): ``multivec.nugget``
- Sub-sentence encoder (Chen et al. 2023): ``multivec.subencoder``
- Document embedding by distillation (Burian, 2023): ``multivec.distill``

Shared by them, from the bottom up (docs/architecture.md has the full map):
``multivec.io`` (checked files, safe loading, model and NLTK resolution), ``multivec.config`` (every config
check), ``multivec.inspection`` (``python -m multivec inspect``), ``multivec.pipeline`` (workflow, cluster and
report support), ``multivec.data`` (downloads and builders), ``multivec.encodings``, ``multivec.metrics``,
``multivec.retrieval`` (BM25), ``multivec.statistics``, ``multivec.training`` (the one training engine),
``multivec.tasks`` (the ranking tasks PI and RR), ``multivec.baselines``, ``multivec.evaluation``.
"""

__version__ = "0.1.0"
