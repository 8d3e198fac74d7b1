"""The decoder that reads nuggets (paper §3, eq. 1 and the residual connection of eq. 5).

Both architectures use the library's ``MBartDecoder`` (causal self-attention + cross-attention to the
nuggets): at paper scale it is mBART-50's pretrained decoder, at demo/smoke scale a small one of the
same class trained from scratch. The residual connection reaches every cross-attention of every layer
and head through one door: the decoder's ``encoder_attention_mask``. Given a 4-D float tensor,
``transformers.masking_utils.create_bidirectional_mask`` returns it unchanged (``_preprocess_mask_arguments``
early-exits on 4-D masks) and both the sdpa and the eager attention add it to q·k·scaling before the
softmax, so the tensor from ``selection.cross_attention_bias`` is the whole mechanism.
The output layer is tied to the decoder's input embedding (as in mBART).
"""

from __future__ import annotations

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


class TargetDecoder(nn.Module):
    def __init__(self, decoder: MBartDecoder, final_logits_bias: torch.Tensor | None = None):
        super().__init__()
        self.decoder = decoder
        vocab_size = decoder.embed_tokens.num_embeddings
        bias = torch.zeros(1, vocab_size) if final_logits_bias is None else final_logits_bias.detach().clone()
        # mBART's pretrained output bias (zeros in released checkpoints); a buffer there too, never trained.
        self.register_buffer("final_logits_bias", bias)
        self.num_heads = decoder.config.decoder_attention_heads
        self.head_dim = decoder.config.d_model // self.num_heads

    @classmethod
    def from_scratch(cls, hidden_size: int, vocab_size: int, pad_id: int, layers: int, heads: int, ffn: int,
                     dropout: float) -> "TargetDecoder":
        if hidden_size % heads:
            raise ValueError(f"decoder_heads={heads} does not divide the encoder width {hidden_size}")
        config = MBartConfig(vocab_size=vocab_size, d_model=hidden_size, encoder_layers=0, decoder_layers=layers,
                             decoder_attention_heads=heads, decoder_ffn_dim=ffn, dropout=dropout,
                             attention_dropout=0.0, activation_dropout=0.0, decoder_layerdrop=0.0,
                             max_position_embeddings=SCRATCH_DECODER_POSITIONS, pad_token_id=pad_id,
                             scale_embedding=True, activation_function="gelu")
        config._attn_implementation = "sdpa"
        return cls(MBartDecoder(config))

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

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(hidden, self.decoder.embed_tokens.weight) + self.final_logits_bias[0]
