"""Loading a baseline encoder from a model reference (shared by the torch and ONNX encoding paths,
multivec.baselines.base_encoder and multivec.baselines.onnx_encoder): a tiny random model built from its config at a
fixed seed, any other model from the mirror or the hub; an encoder-decoder gives its encoder."""

from __future__ import annotations

import torch

from multivec.io.resources import is_tiny_random, load_tokenizer, resolve_model, tiny_random_config

TINY_RANDOM_SEED = 0


def load_encoder(model_ref: str, seed: int = TINY_RANDOM_SEED):
    """(tokenizer, encoder module in eval mode) for a model reference."""
    from transformers import AutoModel

    tokenizer = load_tokenizer(model_ref)
    if is_tiny_random(model_ref):
        torch.manual_seed(seed)
        model = AutoModel.from_config(tiny_random_config(model_ref))
    else:
        model = AutoModel.from_pretrained(resolve_model(model_ref))
    if getattr(model.config, "is_encoder_decoder", False):
        model = model.get_encoder()
    return tokenizer, model.eval()
