"""The decoder that reads nuggets (paper §3, eq. 1 and the residual connection of eq. 5).

Three ways to get one, all the library's own modules (causal self-attention + cross-attention to the
nuggets):
- paper scale: mBART-50's pretrained ``MBartDecoder``;
- ``decoder_init: scratch`` (demo/smoke): a small ``MBartDecoder`` trained from scratch;
- ``decoder_init: encoder`` (demo): warm-started from the pretrained BERT-style encoder's own layers,
  as encoder-decoder warm starting does (Rothe et al., TACL 2020, "bert2bert"): a ``BertModel`` with
  ``is_decoder`` (causal self-attention) and ``add_cross_attention``; the chosen encoder layers'
  self-attention and feed-forward weights and the embeddings' positions/LayerNorm are copied, the
  cross-attentions start random; the word embedding is a trainable COPY of the encoder's (the encoder's
  own matrix is frozen with the frozen bottom), so the target vocabulary is the source tokenizer's.
The residual connection reaches every cross-attention of every layer and head through one door: the
decoder's ``encoder_attention_mask``. Given a 4-D float tensor,
``transformers.masking_utils.create_bidirectional_mask`` returns it unchanged (``_preprocess_mask_arguments``
early-exits on 4-D masks; ``MBartDecoder`` and ``BertModel`` both call it) and both the sdpa and the eager
attention add it to q·k·scaling before the softmax, so the tensor from ``selection.cross_attention_bias``
is the whole mechanism.

Output layer: ``untied`` (the demo default) gives the decoder its own trainable projection,
initialised as a copy of its input word embedding; ``tied`` reuses the decoder's trainable input embedding
(mBART's pretrained lm_head, paper scale). The output bias ``final_logits_bias`` is a trainable parameter
(mBART's checkpoint stores it as a zero buffer; its values load into the parameter unchanged). Measured
before this change: the warm decoder's output layer was the encoder's FROZEN word embedding and the bias a
buffer, so the output distribution could not move (step-0 loss 10.42 > ln V, dev loss after 120 steps worse
than a unigram model of the targets).
"""

from __future__ import annotations

import copy
from typing import Sequence

import torch
from torch import nn
from transformers import MBartConfig
from transformers.models.mbart.modeling_mbart import MBartDecoder

# Learned positions of the scratch decoder; bounds max_target_tokens (checked by NuggetConfig).
SCRATCH_DECODER_POSITIONS = 512


def computation_dtype(reference: torch.Tensor) -> torch.dtype:
    """The dtype attention runs in: the autocast dtype when autocast is on, else the tensor's own."""
    device_type = reference.device.type
    if torch.is_autocast_enabled(device_type):
        return torch.get_autocast_dtype(device_type)
    return reference.dtype


OUTPUT_LAYERS = ("untied", "tied")


class TargetDecoder(nn.Module):
    def __init__(self, decoder: MBartDecoder, final_logits_bias: torch.Tensor | None = None, output: str = "untied"):
        super().__init__()
        if output not in OUTPUT_LAYERS:
            raise ValueError(f"decoder output layer {output!r}: expected one of {OUTPUT_LAYERS}")
        self.decoder = decoder
        embedding = self.input_embedding()
        vocab_size = embedding.num_embeddings
        bias = torch.zeros(1, vocab_size) if final_logits_bias is None else final_logits_bias.detach().clone()
        # mBART's pretrained output bias (zeros in released checkpoints, a buffer there); trained here.
        self.final_logits_bias = nn.Parameter(bias.float())
        # The untied output layer starts as a copy of the input embedding (the tied model's logits at step 0).
        self.output_projection = None
        if output == "untied":
            self.output_projection = nn.Linear(embedding.embedding_dim, vocab_size, bias=False)
            with torch.no_grad():
                self.output_projection.weight.copy_(embedding.weight)
        config = decoder.config
        if config.model_type == "bert":
            self.num_heads, width = config.num_attention_heads, config.hidden_size
        else:
            self.num_heads, width = config.decoder_attention_heads, config.d_model
        self.head_dim = width // self.num_heads

    @classmethod
    def from_scratch(cls, hidden_size: int, vocab_size: int, pad_id: int, layers: int, heads: int, ffn: int,
                     dropout: float, output: str = "untied") -> "TargetDecoder":
        if hidden_size % heads:
            raise ValueError(f"decoder_heads={heads} does not divide the encoder width {hidden_size}")
        config = MBartConfig(vocab_size=vocab_size, d_model=hidden_size, encoder_layers=0, decoder_layers=layers,
                             decoder_attention_heads=heads, decoder_ffn_dim=ffn, dropout=dropout,
                             attention_dropout=0.0, activation_dropout=0.0, decoder_layerdrop=0.0,
                             max_position_embeddings=SCRATCH_DECODER_POSITIONS, pad_token_id=pad_id,
                             scale_embedding=True, activation_function="gelu")
        config._attn_implementation = "sdpa"
        return cls(MBartDecoder(config), output=output)

    @classmethod
    def from_encoder(cls, bert: nn.Module, layers: Sequence[int], dropout: float,
                     output: str = "untied", cross_attention: str = "random") -> "TargetDecoder":
        """A decoder warm-started from a BERT-style encoder (``BertModel``): decoder layer j copies encoder
        layer ``layers[j]`` (self-attention, feed-forward, their LayerNorms); cross-attention is new
        (``cross_attention="random"``, the library's initialisation, as Rothe et al. 2020) or a copy of that
        layer's self-attention (``"self_attention"``); positions, token types, the embedding LayerNorm and the
        word embedding are copied (the decoder's own trainable matrices, not the encoder's frozen ones)."""
        from transformers import BertModel

        if getattr(bert.config, "model_type", None) != "bert":
            raise ValueError(f"decoder_init 'encoder' needs a BERT-style encoder, got {bert.config.model_type!r}")
        n = bert.config.num_hidden_layers
        bad = [i for i in layers if not 0 <= i < n]
        if bad or not layers:
            raise ValueError(f"decoder layers to copy {list(layers)}: the encoder has layers 0..{n - 1}")
        if cross_attention not in ("random", "self_attention"):
            raise ValueError(f"cross_attention {cross_attention!r}: expected 'random' or 'self_attention'")
        config = copy.deepcopy(bert.config)
        config.is_decoder, config.add_cross_attention = True, True
        config.num_hidden_layers = len(layers)
        config.hidden_dropout_prob, config.attention_probs_dropout_prob = dropout, 0.0
        config._attn_implementation = "sdpa"
        decoder = BertModel(config, add_pooling_layer=False)
        embeddings = bert.embeddings
        with torch.no_grad():
            for name in ("word_embeddings", "position_embeddings", "token_type_embeddings", "LayerNorm"):
                getattr(decoder.embeddings, name).load_state_dict(getattr(embeddings, name).state_dict())
            for j, i in enumerate(layers):
                source, target = bert.encoder.layer[i], decoder.encoder.layer[j]
                for name in ("attention", "intermediate", "output"):
                    getattr(target, name).load_state_dict(getattr(source, name).state_dict())
                if cross_attention == "self_attention":
                    target.crossattention.load_state_dict(source.attention.state_dict())
        return cls(decoder, output=output)

    def input_embedding(self) -> nn.Embedding:
        if self.decoder.config.model_type == "bert":
            return self.decoder.embeddings.word_embeddings
        return self.decoder.embed_tokens

    def forward(self, input_ids: torch.Tensor, memory: torch.Tensor, memory_bias: torch.Tensor,
                past_key_values=None, use_cache: bool = False):
        """Decoder hidden states (B × T × d) and the updated cache.

        ``memory``: nuggets (B × k × d); ``memory_bias``: B × 1 × 1 × k additive float mask.
        The decoder's own inputs are right-padded, so the causal mask alone keeps real positions
        from seeing padding, and padding positions are excluded from the loss.
        """
        out = self.decoder(input_ids=input_ids, encoder_hidden_states=memory, encoder_attention_mask=memory_bias,
                           past_key_values=past_key_values, use_cache=use_cache)
        return out.last_hidden_state, out.past_key_values

    def position_memory(self, positions: torch.Tensor) -> torch.Tensor:
        """The warm-started decoder's position embedding of source ``positions`` through its embedding
        LayerNorm (B × k × d): what the memory gets added with ``decoder_memory_positions``."""
        if self.decoder.config.model_type != "bert":
            raise ValueError("position memory needs the warm-started BERT decoder (decoder_init: encoder)")
        embeddings = self.decoder.embeddings
        return embeddings.LayerNorm(embeddings.position_embeddings(positions))

    def output_weight(self) -> torch.Tensor:
        """The output layer's V × d matrix: its own (untied) or the input embedding's (tied)."""
        return self.input_embedding().weight if self.output_projection is None else self.output_projection.weight

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(hidden, self.output_weight()) + self.final_logits_bias[0]
