"""Untrained-encoder baselines for Table 2: every token state, or their mean.

- ``encode_token_states``: the last-layer state of every token of the document (the
  ColBART row of NUGGET §6.1, and ColBERT's "store every token"; Khattab & Zaharia 2020),
  scored with eq. 10 (MaxSim-mean). [CLS]/[SEP] (or <s>/</s>) are kept by default: they
  are states the encoder produces for the document like any other, and with them an empty
  document still has vectors. ``include_special_tokens=False`` drops them.
- ``encode_mean_pooled``: one vector per document exactly as sentence-transformers'
  all-MiniLM-L6-v2 computes it: tokenise with truncation at ``max_length`` (256, the
  model's ``max_seq_length``), mean of the last-layer states over the attention mask
  (special tokens included). Its final Normalize module is omitted: it does not change cosine.

Model references are resolved by ``multivec.resources``: ``"minilm"``, a local folder, a hub
id, or ``"tiny-random-bert"`` / ``"tiny-random-mbart"`` (random weights from
``tiny_random_config`` under a fixed seed, MiniLM's tokenizer). For encoder-decoder models
only the encoder runs. Documents are batched in order of token length to limit padding.
"""

from __future__ import annotations

import logging
from typing import Sequence

import numpy as np
import torch
from tqdm.auto import tqdm

from multivec.resources import default_device, is_tiny_random, load_tokenizer, resolve_model, tiny_random_config

log = logging.getLogger(__name__)

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


def _length_sorted_batches(tokenizer, texts: Sequence[str], max_length: int, batch_size: int):
    lengths = [len(ids) for ids in tokenizer(list(texts), truncation=True, max_length=max_length)["input_ids"]]
    order = np.argsort(-np.asarray(lengths), kind="stable")
    for start in range(0, len(order), batch_size):
        yield order[start:start + batch_size]


def _run(model_ref: str, texts: Sequence[str], max_length: int, batch_size: int, desc: str, show_progress: bool):
    """Yield (indices, last hidden states, attention mask, special-tokens mask) per length-sorted batch."""
    tokenizer, model = load_encoder(model_ref)
    device = default_device()
    model.to(device)
    batches = list(_length_sorted_batches(tokenizer, texts, max_length, batch_size))
    accepted = _forward_args(model)  # an MBart encoder takes no token_type_ids
    with torch.inference_mode():
        for indices in tqdm(batches, desc=desc, unit="batch", disable=not show_progress):
            inputs = tokenizer([texts[i] for i in indices], padding=True, truncation=True, max_length=max_length,
                               return_tensors="pt", return_special_tokens_mask=True)
            special = inputs.pop("special_tokens_mask").bool()
            states = model(**{k: v.to(device) for k, v in inputs.items() if k in accepted}).last_hidden_state
            yield indices, states.float().cpu(), inputs["attention_mask"].bool(), special


def _forward_args(model) -> set[str]:
    import inspect

    return set(inspect.signature(model.forward).parameters)


def encode_token_states(model_ref: str, texts: Sequence[str], max_length: int = 256, batch_size: int = 32,
                        include_special_tokens: bool = True, show_progress: bool = True) -> list[np.ndarray]:
    """Per document, the (n_tokens × d) last-layer states of its real (non-padding) tokens."""
    out: list[np.ndarray | None] = [None] * len(texts)
    for indices, states, attention, special in _run(model_ref, texts, max_length, batch_size,
                                                   "token states", show_progress):
        keep = attention if include_special_tokens else attention & ~special
        for row, i in enumerate(indices):
            vectors = states[row][keep[row]].float().numpy()
            if len(vectors) == 0:
                raise ValueError(f"document {i} has no tokens once special tokens are dropped (empty text?)")
            out[i] = vectors
    return out  # type: ignore[return-value]


def encode_mean_pooled(model_ref: str, texts: Sequence[str], max_length: int = 256, batch_size: int = 32,
                       show_progress: bool = True) -> np.ndarray:
    """(n_documents × d): mean of the last-layer states over the attention mask (sentence-transformers pooling)."""
    out: np.ndarray | None = None
    for indices, states, attention, _ in _run(model_ref, texts, max_length, batch_size, "mean pooling",
                                              show_progress):
        mask = attention.unsqueeze(-1).to(states.dtype)
        pooled = (states * mask).sum(dim=1) / mask.sum(dim=1).clamp_min(1e-9)
        if out is None:
            out = np.zeros((len(texts), pooled.shape[-1]), dtype=np.float32)
        out[indices] = pooled.float().numpy()
    if out is None:
        raise ValueError("no texts to encode")
    return out


def write_baseline_encodings(model_ref: str, documents: dict[str, str], out_dir, pooling: str = "tokens",
                             max_length: int = 256, batch_size: int = 32, show_progress: bool = True) -> None:
    """Encode ``{id: text}`` and write the encodings artifact: ``pooling`` "tokens" (every token
    state; score with maxsim_mean) or "mean" (one mean-pooled vector; score with cosine)."""
    from multivec.encodings import write_encodings

    ids = list(documents)
    texts = [documents[i] for i in ids]
    if pooling == "tokens":
        vectors = encode_token_states(model_ref, texts, max_length, batch_size, show_progress=show_progress)
    elif pooling == "mean":
        vectors = list(encode_mean_pooled(model_ref, texts, max_length, batch_size, show_progress)[:, None, :])
    else:
        raise ValueError(f"pooling must be 'tokens' or 'mean', not {pooling!r}")
    write_encodings(out_dir, ids, vectors, info={"encoder": f"untrained {pooling}", "model": model_ref,
                                                 "max_length": max_length, "special_tokens": True})
