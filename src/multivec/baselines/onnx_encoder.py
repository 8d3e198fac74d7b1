"""Opt-in ONNX Runtime encoding of the mean-pooled baseline: the same vectors (cosine >= 0.9999).

On the reference CPU it runs at about torch's speed (1.01x sentence-transformers; docs/benchmarks.md).

``encode_mean_pooled(..., backend="onnx")`` (multivec.baselines.base_encoder) runs the encoder through
ONNX Runtime instead of torch: the same tokenisation, length-sorted batches and mean pooling, only the
transformer forward differs. Nothing the DAG writes uses it (the default backend is torch).

``export_onnx`` writes the encoder as ONNX (eager attention, dynamic batch and length), optionally with
ONNX Runtime's BERT fusions (one ``Attention`` op per layer, ``SkipLayerNormalization``, ``BiasGelu``), and
checks it against the torch encoder on a padded batch: the largest absolute difference of the last-layer
states over real tokens must stay within ``atol`` or ``OnnxMismatch`` is raised (tests/test_bench_encode.py).
Nothing is cached: callers pass the path to write (benchmarks/encode_speed.py uses a temporary
folder). Needs ``onnx``, ``onnxscript`` and ``onnxruntime`` (pyproject's ``bench`` extra).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from multivec.baselines.encoder_loading import load_encoder

DEFAULT_ATOL = 1e-4
CHECK_TEXTS = ("A short document.",
               "A longer document, with several clauses, so that the batch needs padding: the shorter one gets "
               "pad tokens and an attention mask of zeros, which the export must honour exactly as torch does.")


class OnnxMismatch(RuntimeError):
    """The exported model's outputs differ from the torch encoder's beyond tolerance."""


class _LastHiddenState(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


def session(path: str | Path, threads: int | None = None):
    """An ONNX Runtime CPU session with ``threads`` intra-op threads (default: torch's thread count)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or torch.get_num_threads()
    options.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def max_state_difference(onnx_path: str | Path, model, tokenizer, texts: Sequence[str] = CHECK_TEXTS) -> float:
    """Largest |ONNX - torch| of the last-layer states over real (unpadded) tokens of one padded batch."""
    batch = tokenizer(list(texts), padding=True, truncation=True, return_tensors="pt")
    with torch.inference_mode():
        expected = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).last_hidden_state
    got = session(onnx_path, 1).run(None, {"input_ids": batch["input_ids"].numpy(),
                                           "attention_mask": batch["attention_mask"].numpy()})[0]
    real = batch["attention_mask"].numpy().astype(bool)
    return float(np.abs(got - expected.float().numpy())[real].max())


def export_onnx(model_ref: str, out_path: str | Path, fuse: bool = True, atol: float = DEFAULT_ATOL,
                check_texts: Sequence[str] = CHECK_TEXTS) -> dict:
    """Export ``model_ref``'s encoder to ``out_path`` (ONNX), fused when ``fuse``; check it against torch.

    Returns {"path", "max_abs_difference", "fused_operators"}; raises OnnxMismatch beyond ``atol``.
    """
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tokenizer, model = load_encoder(model_ref)
    reference = model  # the encoder as the DAG runs it (its default attention implementation)
    _, exported = load_encoder(model_ref)
    exported.set_attn_implementation("eager")  # traces to plain ops; sdpa's mask shortcuts are data-dependent
    sample = tokenizer(list(check_texts), padding=True, return_tensors="pt")
    plain = out_path.with_suffix(".plain.onnx") if fuse else out_path
    torch.onnx.export(_LastHiddenState(exported), (sample["input_ids"], sample["attention_mask"]), str(plain),
                      input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "length"}, "attention_mask": {0: "batch", 1: "length"},
                                    "last_hidden_state": {0: "batch", 1: "length"}},
                      opset_version=17, dynamo=False)
    fused_operators = {}
    if fuse:
        from onnxruntime.transformers import optimizer

        optimized = optimizer.optimize_model(str(plain), model_type="bert",
                                             num_heads=exported.config.num_attention_heads,
                                             hidden_size=exported.config.hidden_size, opt_level=1)
        optimized.save_model_to_file(str(out_path))
        fused_operators = {k: v for k, v in optimized.get_fused_operator_statistics().items() if v}
    difference = verify_onnx(out_path, model_ref, atol, check_texts, (tokenizer, reference))
    return {"path": str(out_path), "max_abs_difference": difference, "fused_operators": fused_operators}


def verify_onnx(onnx_path: str | Path, model_ref: str, atol: float = DEFAULT_ATOL,
                check_texts: Sequence[str] = CHECK_TEXTS, loaded=None) -> float:
    """The largest |ONNX - torch| of the last-layer states on a padded batch; raises OnnxMismatch beyond ``atol``."""
    tokenizer, model = loaded or load_encoder(model_ref)
    difference = max_state_difference(onnx_path, model, tokenizer, check_texts)
    if not difference <= atol:
        raise OnnxMismatch(f"{onnx_path}: ONNX last-layer states differ from torch's by {difference:.2e} "
                           f"(tolerance {atol:.0e})")
    return difference
