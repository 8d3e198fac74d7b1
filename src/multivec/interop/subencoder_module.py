"""The sub-sentence encoder's proposition pooling as a sentence-transformers module (Chen et al. 2023, §3.1).

An exported SubEncoder folder is a ``SentenceTransformer`` of the library's ``Transformer`` (the trained encoder,
``max_seq_length`` = the training length ``max_tokens``) and ``PropositionPooling`` (this module): the mean of
the sentence's token states over each proposition's subword mask, then the MLP head (Linear, ReLU, Linear, and
Table 5's fitted projection when the model has one), as ``multivec.subencoder.model.SubEncoder.forward``.

A sentence and its propositions go in through ``encode_propositions(model, sentences, spans)``: spans are, per
sentence, one list of ``[start, end)`` character spans per proposition (the project's format); each proposition
becomes a subword mask exactly as ``SubEncoder.span_masks`` makes it (``multivec.subencoder.masks``), the batch is
tokenised by the model's own ``Transformer`` and run through the model; the result is one array per sentence,
(propositions × output dimension), equal to ``SubEncoder.encode``. ``model.encode(sentences)`` alone (no spans)
treats the whole sentence as one proposition (every non-special token), which is what
``encode_propositions(model, [s], [[[[0, len(s)]]]])`` gives.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

from multivec.interop.module_io import ExportedModule

MASKS_KEY = "proposition_masks"


class PropositionPooling(ExportedModule):
    """Mean of token states over each proposition mask, then the SubEncoder's head."""

    config_keys = ["hidden_size", "mlp_hidden", "output_dim", "projection_dim", "special_token_ids"]

    def __init__(self, hidden_size: int, mlp_hidden: int, output_dim: int, projection_dim: int | None = None,
                 special_token_ids: list[int] | None = None):
        super().__init__()
        self.hidden_size, self.mlp_hidden, self.output_dim = int(hidden_size), int(mlp_hidden), int(output_dim)
        self.projection_dim = int(projection_dim) if projection_dim else None
        self.special_token_ids = sorted(int(i) for i in (special_token_ids or []))
        layers = [nn.Linear(self.hidden_size, self.mlp_hidden), nn.ReLU(), nn.Linear(self.mlp_hidden, self.output_dim)]
        if self.projection_dim is not None:
            layers.append(nn.Linear(self.output_dim, self.projection_dim))
        self.head = nn.Sequential(*layers)

    def get_embedding_dimension(self) -> int:
        return self.projection_dim or self.output_dim

    def forward(self, features: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        states = features["token_embeddings"]
        attention = features["attention_mask"]
        masks = features.get(MASKS_KEY)
        if masks is None:  # the whole sentence as one proposition: every real, non-special token
            special = torch.isin(features["input_ids"], torch.tensor(self.special_token_ids, device=states.device))
            masks = (attention.bool() & ~special).unsqueeze(1)
        weights = (masks * attention.unsqueeze(1)).to(states.dtype)  # B × P × T
        counts = weights.sum(-1, keepdim=True)
        real = features.get("proposition_mask", torch.ones(masks.shape[:2], dtype=torch.bool, device=states.device))
        if bool(((counts.squeeze(-1) == 0) & real.bool()).any()):
            raise ValueError("a proposition mask selects no token (empty, or truncated away by max_seq_length)")
        pooled = torch.einsum("bpt,bth->bph", weights, states) / counts.clamp_min(1.0)
        vectors = self.head(pooled)
        if features.get(MASKS_KEY) is None:
            features["sentence_embedding"] = vectors[:, 0]
        else:
            features["proposition_embeddings"] = vectors
        return features


def encode_propositions(model, sentences: Sequence[str], spans: Sequence[Sequence[Sequence[Sequence[int]]]],
                        batch_size: int = 32) -> list[np.ndarray]:
    """Per sentence, a (propositions × dimension) float32 array: ``spans[i]`` lists sentence i's propositions,
    each a list of ``[start, end)`` character spans (see the module docstring)."""
    from multivec.subencoder.masks import spans_to_token_mask

    if len(spans) != len(sentences):
        raise ValueError(f"{len(sentences)} sentences but {len(spans)} lists of proposition spans")
    transformer = model[0]
    tokenizer = transformer.tokenizer
    out: list[np.ndarray] = []
    model.eval()
    dim = model[-1].get_embedding_dimension()
    for start in range(0, len(sentences), batch_size):
        batch = [str(s) for s in sentences[start:start + batch_size]]
        batch_spans = spans[start:start + batch_size]
        features = transformer.preprocess(batch)
        encoded = tokenizer(batch, truncation=True, max_length=transformer.max_seq_length,
                            return_offsets_mapping=True, return_special_tokens_mask=True)
        width = features["input_ids"].shape[1]
        most = max([len(p) for p in batch_spans] + [1])
        masks = torch.zeros(len(batch), most, width, dtype=torch.long)
        real = torch.zeros(len(batch), most, dtype=torch.bool)
        for i, propositions in enumerate(batch_spans):
            for j, prop in enumerate(propositions):
                row = spans_to_token_mask(encoded["offset_mapping"][i], prop, encoded["special_tokens_mask"][i])
                if not any(row):
                    raise ValueError(f"sentence {start + i}, proposition {j}: the spans {prop} select no token "
                                     f"(sentence: {batch[i][:80]!r})")
                masks[i, j, : len(row)] = torch.tensor(row)
                real[i, j] = True
        features[MASKS_KEY] = masks
        features["proposition_mask"] = real
        device = next(model.parameters()).device
        features = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in features.items()}
        with torch.inference_mode():
            vectors = model(features)["proposition_embeddings"].float().cpu().numpy()
        for i, propositions in enumerate(batch_spans):
            out.append(vectors[i, : len(propositions)].copy() if propositions else np.zeros((0, dim), np.float32))
    return out
