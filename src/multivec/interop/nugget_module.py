"""NUGGET's selection as a sentence-transformers module (Qin & Van Durme 2023, §3.1, eq. 2-4 and 7-8).

An exported NUGGET folder is a ``MultiVectorEncoder`` of two modules:

0. the library's ``Transformer`` on a BERT holding the embeddings and encoder layers 1..l (l = the scorer layer):
   the frozen bottom, whose last output is X^(l), the states the scorer reads;
1. ``NuggetSelector`` (this module, ``multivec.interop.nugget_module.NuggetSelector`` in ``modules.json``): the
   scorer s = FFN(X^(l)) (eq. 2), TopK of k = ceil(n·r) per document over its n real tokens, special tokens
   included (eq. 3; ``multivec.nugget.selection.select_top_k``), the nugget feedback e^n / e^o added at layer l
   (eq. 7-8), encoder layers l+1..L, and the selected last-layer rows in token order times W^V (eq. 4).

Its output replaces ``token_embeddings`` by the k nuggets (B × k_max × d) and ``attention_mask`` by the nugget
mask, so ``MultiVectorEncoder.encode`` returns, per document, the k × d vectors that
``multivec.nugget.encoding.encode_documents`` writes; ``nugget_indices`` and ``nugget_scores`` (the chosen token
positions and their scores) stay in the features (``encode(..., output_value=None)``). The rule selectors of the
ablations (``chunking``, ``random``) run from the token ids as the project's ``RuleSelector``; the
sentence-boundary selector needs each text's sentence ends, which ``encode`` cannot pass, and is refused at export.

The vectors are not normalised (as the encodings artifact stores them); the project scores them with MaxSim-mean
on unit vectors (eq. 10), which is ``encode(..., normalize_embeddings=True)`` and ``similarity_fn_name="meanmaxsim"``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from multivec.interop.module_io import ExportedModule

SELECTORS = ("learned", "chunking", "random")


class NuggetSelector(ExportedModule):
    """Scorer, TopK selection, feedback, the encoder's top layers and W^V (see the module docstring)."""

    config_keys = ["layer_config", "scorer_layer", "ratio", "selector", "feedback", "chunk_final_ids", "seed"]
    forward_kwargs = {"task"}

    def __init__(self, layer_config: dict[str, Any], scorer_layer: int, ratio: float, selector: str = "learned",
                 feedback: bool = True, chunk_final_ids: list[int] | None = None, seed: int = 0):
        super().__init__()
        from transformers import BertConfig
        from transformers.models.bert.modeling_bert import BertLayer

        from multivec.nugget.selection import NuggetScorer

        if selector not in SELECTORS:
            raise ValueError(f"NuggetSelector: selector {selector!r} cannot run inside a sentence-transformers "
                             f"module (supported: {', '.join(SELECTORS)})")
        self.layer_config = dict(layer_config)
        self.scorer_layer, self.ratio, self.selector = int(scorer_layer), float(ratio), selector
        self.feedback, self.seed = bool(feedback), int(seed)
        self.chunk_final_ids = sorted(int(i) for i in (chunk_final_ids or []))
        config = BertConfig(**{k: v for k, v in self.layer_config.items() if k not in ("architectures",)})
        config._attn_implementation = "sdpa"
        self.hf_config = config
        self.hidden_size = int(config.hidden_size)
        self.layers = nn.ModuleList(BertLayer(config, layer_idx=i)
                                    for i in range(self.scorer_layer, config.num_hidden_layers))
        self.scorer = NuggetScorer(self.hidden_size) if selector == "learned" else None
        self.type_embedding = nn.Embedding(2, self.hidden_size) if self.feedback else None
        self.value_projection = nn.Linear(self.hidden_size, self.hidden_size, bias=False)
        self.eval()

    def get_embedding_dimension(self) -> int:
        return self.hidden_size

    def _rule_selection(self, input_ids: torch.Tensor, token_mask: torch.Tensor):
        from multivec.nugget.selection import RuleSelector

        rule = RuleSelector.__new__(RuleSelector)
        rule.kind, rule.ratio, rule.seed = self.selector, self.ratio, self.seed
        rule.chunk_final_ids = set(self.chunk_final_ids)
        return rule(input_ids, token_mask)

    def forward(self, features: dict[str, Any], task: str | None = None, **kwargs: Any) -> dict[str, Any]:
        from transformers.masking_utils import create_bidirectional_mask

        from multivec.nugget.selection import select_top_k

        hidden = features["token_embeddings"]
        attention_mask = features["attention_mask"]
        token_mask = attention_mask.bool()
        layer_mask = create_bidirectional_mask(config=self.hf_config, inputs_embeds=hidden,
                                               attention_mask=attention_mask)
        all_scores = None
        if self.scorer is not None:
            all_scores = self.scorer(hidden).float()
            indices, nugget_mask = select_top_k(all_scores, token_mask, self.ratio)
        else:
            indices, nugget_mask = self._rule_selection(features["input_ids"], token_mask)
        if self.type_embedding is not None:
            hits = torch.zeros(hidden.shape[:2], dtype=torch.long, device=hidden.device)
            hits = hits.scatter_add(1, indices, nugget_mask.long())
            hidden = hidden + self.type_embedding((hits > 0).long())
        for layer in self.layers:
            hidden = layer(hidden, layer_mask)
        selected = hidden.gather(1, indices.unsqueeze(-1).expand(-1, -1, hidden.shape[-1]))
        features["token_embeddings"] = self.value_projection(selected)
        features["attention_mask"] = nugget_mask.long()
        features["nugget_indices"] = indices
        if all_scores is not None:
            features["nugget_scores"] = all_scores.gather(1, indices)
        return features
