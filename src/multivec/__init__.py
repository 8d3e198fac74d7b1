"""multivec: reproductions of three works that represent text by more than one vector.

- NUGGET (Qin & Van Durme, ICML 2023): ``multivec.nugget``
- Sub-sentence encoder (Chen et al. 2023)
- Document embedding by distillation (Burian, 2023)

Shared pieces: ``multivec.io`` (checked file reading/writing), ``multivec.resources``
(model and NLTK resolution), ``multivec.data`` (downloads and builders),
``multivec.retrieval`` / ``multivec.metrics`` (BM25, MaxSim, MRR).
"""

__version__ = "0.1.0"
