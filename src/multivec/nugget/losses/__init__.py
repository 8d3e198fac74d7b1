"""NUGGET's training losses (Qin & Van Durme, ICML 2023), one module each:

- ``sequence_nll``: the encoder-decoder's objective (§3.4, the negative log likelihood of the target
  document given the source), the mean token cross-entropy of the AE and MT objectives (and TSDAE's);
- ``language_model_nll``: the language model's per-token negative log likelihood (§6.2, eq. 11-12;
  App. B.2), the training loss of the NUGGET LM and the words' NLL of its perplexity (footnote 6).

Both cast the decoder's logits to float32 before the softmax, whatever the decoder's dtype.
"""

from __future__ import annotations

from multivec.nugget.losses.language_model_nll import language_model_nll
from multivec.nugget.losses.sequence_nll import sequence_nll

__all__ = ["language_model_nll", "sequence_nll"]
