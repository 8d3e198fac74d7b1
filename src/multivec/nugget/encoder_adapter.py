"""Layer-by-layer access to a pretrained transformer encoder (paper §3.1 and §3.3).

NUGGET needs the hidden states of layer l (the scorer's input, §3.1) and must be able to change
them before layer l+1 runs (nugget feedback, eq. 7-8). Hugging Face encoders only run end to end,
so each architecture gets an adapter that exposes the same four steps:
``embed`` -> ``self_attention_mask`` -> ``run_layer(i)`` for every layer -> ``finalize``.
The adapters call the library's own modules (embeddings, layers, norms); no attention code is copied.
Dropout follows the mode of the module it belongs to, so a frozen bottom (§3.3) put in eval mode runs
without dropout while the layers above it train with it.
"""

from __future__ import annotations

import torch
from torch import nn
from transformers.masking_utils import create_bidirectional_mask


class EncoderAdapter(nn.Module):
    """Common interface; subclasses wrap one architecture's encoder module."""

    hidden_size: int
    num_layers: int

    def embed(self, input_ids: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def self_attention_mask(self, hidden: torch.Tensor, attention_mask: torch.Tensor):
        """The mask the layers take, built by the library from the 2-D padding mask."""
        return create_bidirectional_mask(config=self.hf_config, inputs_embeds=hidden, attention_mask=attention_mask)

    def run_layer(self, index: int, hidden: torch.Tensor, layer_mask) -> torch.Tensor:
        return self.layers[index](hidden, layer_mask)

    def run_bottom(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, n_layers: int) -> torch.Tensor:
        """Embeddings then layers 1..n_layers: the states NUGGET's scorer reads (n_layers = l)."""
        hidden = self.embed(input_ids)
        layer_mask = self.self_attention_mask(hidden, attention_mask)
        for i in range(n_layers):
            hidden = self.run_layer(i, hidden, layer_mask)
        return hidden

    def finalize(self, hidden: torch.Tensor) -> torch.Tensor:
        """What follows the last layer (a final norm for pre-LN encoders)."""
        return hidden

    def embedding_modules(self) -> list[nn.Module]:
        raise NotImplementedError

    @property
    def hf_config(self):
        raise NotImplementedError

    @property
    def layers(self) -> nn.ModuleList:
        raise NotImplementedError


class BertEncoderAdapter(EncoderAdapter):
    """BERT (and MiniLM): embeddings (word + position + type, LayerNorm) then ``encoder.layer[i]`` (post-LN)."""

    def __init__(self, bert: nn.Module):
        super().__init__()
        self.bert = bert
        self.hidden_size = bert.config.hidden_size
        self.num_layers = bert.config.num_hidden_layers

    @property
    def hf_config(self):
        return self.bert.config

    @property
    def layers(self) -> nn.ModuleList:
        return self.bert.encoder.layer

    def embed(self, input_ids: torch.Tensor) -> torch.Tensor:
        # Single-segment input: token type 0 everywhere.
        return self.bert.embeddings(input_ids=input_ids, token_type_ids=torch.zeros_like(input_ids))

    def embedding_modules(self) -> list[nn.Module]:
        return [self.bert.embeddings]


class MBartEncoderAdapter(EncoderAdapter):
    """mBART encoder: embed_tokens (scaled) + learned positions, layernorm_embedding, pre-LN layers, final layer_norm."""

    def __init__(self, encoder: nn.Module):
        super().__init__()
        self.encoder = encoder
        self.hidden_size = encoder.config.d_model
        self.num_layers = encoder.config.encoder_layers

    @property
    def hf_config(self):
        return self.encoder.config

    @property
    def layers(self) -> nn.ModuleList:
        return self.encoder.layers

    def embed(self, input_ids: torch.Tensor) -> torch.Tensor:
        enc = self.encoder
        inputs_embeds = enc.embed_tokens(input_ids)  # MBartScaledWordEmbedding applies embed_scale itself
        positions = enc.embed_positions(inputs_embeds[..., -1])  # the library passes a (B, n) tensor for the shape
        hidden = enc.layernorm_embedding(inputs_embeds + positions.to(inputs_embeds.device))
        # The dropout belongs to the embeddings: it follows their mode, not the whole encoder's, so a
        # frozen bottom kept in eval mode gives the scorer noise-free features while the top trains.
        return nn.functional.dropout(hidden, p=enc.dropout, training=enc.layernorm_embedding.training)

    def finalize(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.encoder.layer_norm(hidden)

    def embedding_modules(self) -> list[nn.Module]:
        return [self.encoder.embed_tokens, self.encoder.embed_positions, self.encoder.layernorm_embedding]
