"""NUGGET (Qin & Van Durme, ICML 2023): text as a variable number of token-anchored vectors.

Modules, each tied to a part of the paper:
- ``configuration``: ``NuggetConfig``, every hyperparameter (§3, §4);
- ``encoder_adapter``: layer-by-layer access to BERT / mBART encoders (§3.1, §3.3);
- ``selection``: scorer, TopK selection, rule selectors, residual cross-attention bias (§3.1, eq. 2-5);
- ``decoder``: the decoder reading nuggets (§3, eq. 1, 5);
- ``target_tokenizer``: the decoder's vocabulary;
- ``modeling``: ``NuggetModel`` (the whole encoder-decoder, eq. 1-8), which only models;
- ``processing``: ``NuggetProcessor``, the two tokenizers and text to tensors (§3 input, §4 targets);
- ``generation``: greedy and beam-search decoding from nuggets;
- ``training``: ``TrainConfig`` and resumable ``train`` (§4);
- ``encoding``: documents to nuggets, the encodings artifact;
- ``losses``: the training losses, one module each (§3.4; §6.2, eq. 11-12 for the language model);
- ``tables``: the results tables (Tables 1, 2 and 4), their figure and statistics.
"""

from multivec.nugget.configuration import NuggetConfig

__all__ = ["NuggetConfig"]
