"""Untrained-encoder baselines for Table 2: every token state, or their mean.

- ``encode_token_states``: the last-layer state of every token of the document (the
  ColBART row of NUGGET §6.1, and ColBERT's "store every token"; Khattab & Zaharia 2020),
  scored with eq. 10 (MaxSim-mean). [CLS]/[SEP] (or <s>/</s>) are kept by default: they
  are states the encoder produces for the document like any other, and with them an empty
  document still has vectors. ``include_special_tokens=False`` drops them.
- ``encode_mean_pooled``: one vector per document exactly as sentence-transformers'
  all-MiniLM-L6-v2 computes it: tokenise with truncation at ``max_length``, mean of the
  last-layer states over the attention mask (special tokens included). Its final Normalize
  module is omitted: it does not change cosine. With ``max_length=256`` (the model's
  ``max_seq_length``) the vectors equal sentence-transformers' to 1e-5.

``max_length`` None (the pipeline's default) encodes whole documents up to the encoder's
position limit (``multivec.encodings.encoder_token_limit``: 512 for MiniLM), so the neural
rows read what BM25 reads; a larger number is refused. Each corpus is tokenised once;
``write_baseline_encodings`` records how many documents and tokens the limit still cut.
``bf16`` runs the encoder under bfloat16 autocast (worth it only on hardware with bf16
matrix units: GPUs, or CPUs with AVX512-BF16/AMX; see docs/benchmarks.md).

Model references are resolved by ``multivec.io.resources``: ``"minilm"``, a local folder, a hub
id, or ``"tiny-random-bert"`` / ``"tiny-random-mbart"`` (random weights from
``tiny_random_config`` under a fixed seed, MiniLM's tokenizer). For encoder-decoder models
only the encoder runs. Documents are batched in order of token length to limit padding.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch
from tqdm.auto import tqdm

from multivec.encodings import encoder_token_limit, resolve_max_tokens, truncation_summary
from multivec.io.resources import default_device, is_tiny_random, load_tokenizer, resolve_model, tiny_random_config
from multivec.training.batching import pad_sequences
from multivec.baselines.encoder_loading import TINY_RANDOM_SEED, load_encoder  # noqa: F401 (re-exported)

log = logging.getLogger(__name__)



def autocast(device: str | torch.device, bf16: bool):
    """bfloat16 autocast for encoding when ``bf16`` (matrix products in bf16, norms and softmax in fp32)."""
    return torch.autocast(torch.device(device).type, dtype=torch.bfloat16, enabled=bf16)


@dataclass
class Tokenized:
    """A corpus tokenised once: truncated ids (special tokens included) and the untruncated lengths."""

    input_ids: list[list[int]]
    special_tokens: list[list[int]]
    full_lengths: list[int]
    max_tokens: int
    limit: int

    def truncation(self) -> dict[str, Any]:
        return truncation_summary(self.full_lengths, [len(i) for i in self.input_ids], self.max_tokens, self.limit)


def tokenize_documents(tokenizer, texts: Sequence[str], max_tokens: int | None, limit: int) -> Tokenized:
    """Tokenise ``texts`` truncated at ``max_tokens`` (None: the encoder's ``limit``), and count what is cut."""
    max_tokens = resolve_max_tokens(max_tokens, limit)
    texts = list(texts)
    if not texts:
        return Tokenized([], [], [], max_tokens, limit)
    full = tokenizer(texts, add_special_tokens=True, verbose=False)["input_ids"]
    kept = tokenizer(texts, add_special_tokens=True, truncation=True, max_length=max_tokens,
                     return_special_tokens_mask=True)
    return Tokenized(kept["input_ids"], kept["special_tokens_mask"], [len(f) for f in full], max_tokens, limit)


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> list[np.ndarray]:
    """Document indices in batches of similar length (longest first, so peak memory shows at once; ties keep
    input order)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    order = np.argsort(-np.asarray(lengths), kind="stable")
    return [order[start:start + batch_size] for start in range(0, len(order), batch_size)]


def _run(model_ref: str, texts: Sequence[str], max_length: int | None, batch_size: int, desc: str,
         show_progress: bool, bf16: bool = False, tokenized_out: list | None = None):
    """Yield (indices, last hidden states, attention mask, special-tokens mask) per length-sorted batch.

    ``max_length`` None encodes up to the encoder's position limit; the tokenised corpus (with its
    truncation counts) is appended to ``tokenized_out`` when given.
    """
    tokenizer, model = load_encoder(model_ref)
    device = default_device()
    model.to(device)
    tokenized = tokenize_documents(tokenizer, texts, max_length, encoder_token_limit(model.config))
    if tokenized_out is not None:
        tokenized_out.append(tokenized)
    batches = length_sorted_batches([len(i) for i in tokenized.input_ids], batch_size)
    with torch.inference_mode(), autocast(device, bf16):
        for indices in tqdm(batches, desc=desc, unit="batch", disable=not show_progress):
            ids, attention = pad_sequences([tokenized.input_ids[i] for i in indices], tokenizer.pad_token_id, "cpu")
            special, _ = pad_sequences([tokenized.special_tokens[i] for i in indices], 0, "cpu")
            # Only ids and mask: BERT's token types default to 0, and an mBART encoder takes none.
            states = model(input_ids=ids.to(device), attention_mask=attention.to(device)).last_hidden_state
            yield indices, states.float().cpu(), attention.bool(), special.bool()


def _run_onnx(onnx_path: str, model_ref: str, texts: Sequence[str], max_length: int | None, batch_size: int):
    """``_run``'s batches (without the special-tokens mask) with the encoder run by ONNX Runtime."""
    from transformers import AutoConfig

    from multivec.baselines.onnx_encoder import session

    tokenizer = load_tokenizer(model_ref)
    config = tiny_random_config(model_ref) if is_tiny_random(model_ref) else \
        AutoConfig.from_pretrained(resolve_model(model_ref))
    tokenized = tokenize_documents(tokenizer, texts, max_length, encoder_token_limit(config))
    runner = session(onnx_path)
    for indices in length_sorted_batches([len(i) for i in tokenized.input_ids], batch_size):
        ids, attention = pad_sequences([tokenized.input_ids[i] for i in indices], tokenizer.pad_token_id, "cpu")
        states = runner.run(None, {"input_ids": ids.numpy(), "attention_mask": attention.numpy()})[0]
        yield indices, torch.from_numpy(states), attention.bool(), None


def encode_token_states(model_ref: str, texts: Sequence[str], max_length: int | None = None, batch_size: int = 32,
                        include_special_tokens: bool = True, show_progress: bool = True, bf16: bool = False,
                        tokenized_out: list | None = None) -> list[np.ndarray]:
    """Per document, the (n_tokens × d) last-layer states of its real (non-padding) tokens."""
    out: list[np.ndarray | None] = [None] * len(texts)
    for indices, states, attention, special in _run(model_ref, texts, max_length, batch_size,
                                                   "token states", show_progress, bf16, tokenized_out):
        keep = attention if include_special_tokens else attention & ~special
        for row, i in enumerate(indices):
            vectors = states[row][keep[row]].numpy()
            if len(vectors) == 0:
                raise ValueError(f"document {i} has no tokens once special tokens are dropped (empty text?)")
            out[i] = vectors
    return out  # type: ignore[return-value]


def encode_mean_pooled(model_ref: str, texts: Sequence[str], max_length: int | None = None, batch_size: int = 32,
                       show_progress: bool = True, bf16: bool = False, backend: str = "torch",
                       onnx_path: str | None = None) -> np.ndarray:
    """(n_documents × d): mean of the last-layer states over the attention mask (sentence-transformers pooling).

    ``backend="onnx"`` (opt-in; the DAG uses torch) runs the encoder exported by
    ``multivec.baselines.onnx_encoder.export_onnx`` at ``onnx_path`` through ONNX Runtime, with the same
    tokenisation, batches and pooling (benchmarks/encode_speed.py: cosine to torch's vectors >= 0.9999).
    """
    if backend == "onnx":
        if onnx_path is None:
            raise ValueError("backend='onnx' needs onnx_path (see multivec.baselines.onnx_encoder.export_onnx)")
        if bf16:
            raise ValueError("bf16 is a torch autocast option; the onnx backend runs the exported fp32 model")
        batches = _run_onnx(onnx_path, model_ref, texts, max_length, batch_size)
    elif backend == "torch":
        batches = _run(model_ref, texts, max_length, batch_size, "mean pooling", show_progress, bf16)
    else:
        raise ValueError(f"backend must be 'torch' or 'onnx', not {backend!r}")
    out: np.ndarray | None = None
    for indices, states, attention, _ in batches:
        mask = attention.unsqueeze(-1).to(states.dtype)
        pooled = (states * mask).sum(dim=1) / mask.sum(dim=1).clamp_min(1e-9)
        if out is None:
            out = np.zeros((len(texts), pooled.shape[-1]), dtype=np.float32)
        out[indices] = pooled.numpy()
    if out is None:
        raise ValueError("no texts to encode")
    return out


def write_baseline_encodings(model_ref: str, documents: dict[str, str], out_dir, pooling: str = "tokens",
                             max_length: int | None = None, batch_size: int = 32, show_progress: bool = True,
                             bf16: bool = False, info: dict[str, Any] | None = None) -> None:
    """Encode ``{id: text}`` and write the encodings artifact: ``pooling`` "tokens" (every token
    state; score with maxsim_mean) or "mean" (one mean-pooled vector; score with cosine).
    ``max_length`` None: whole documents up to the encoder's position limit."""
    from multivec.encodings import write_encodings

    if pooling not in ("tokens", "mean"):
        raise ValueError(f"pooling must be 'tokens' or 'mean', not {pooling!r}")
    ids = list(documents)
    texts = [documents[i] for i in ids]
    tokenized: list[Tokenized] = []
    vectors = encode_token_states(model_ref, texts, max_length, batch_size, show_progress=show_progress, bf16=bf16,
                                  tokenized_out=tokenized)
    if pooling == "mean":
        vectors = [v.mean(axis=0, keepdims=True) for v in vectors]
    truncation = tokenized[0].truncation()
    log.info("%s: %d of %d documents truncated at %d tokens (%.2f%% of tokens lost)", model_ref,
             truncation["truncated_documents"], truncation["documents"], truncation["max_tokens"],
             100 * truncation["tokens_lost_share"])
    write_encodings(out_dir, ids, vectors, info={"encoder": f"untrained {pooling}", "model": model_ref,
                                                 "max_length": truncation["max_tokens"], "special_tokens": True,
                                                 "bf16": bf16, "truncation": truncation, **(info or {})})
