"""A Hugging Face encoder held in memory as sentence-transformers' own ``Transformer`` module.

Every export builds its input module the same way: the project's encoder (trained weights) and tokenizer are
written with ``save_pretrained`` to a scratch folder and read by ``Transformer`` (or a subclass), so the exported
folder holds what the library itself saves: ``config.json``, ``model.safetensors``, the tokenizer files and
``sentence_bert_config.json``. ``max_seq_length`` is set on the module (the tokenizer's ``model_max_length``).
"""

from __future__ import annotations

import contextlib
import tempfile
from typing import Any, Iterator


@contextlib.contextmanager
def transformer_module(backbone, tokenizer, max_seq_length: int | None, module_class=None,
                       **kwargs: Any) -> Iterator[Any]:
    """A ``Transformer`` (or ``module_class``) on ``backbone`` + ``tokenizer``; valid inside the ``with`` block,
    which should save the model that holds it."""
    from sentence_transformers.base.modules import Transformer

    module_class = module_class or Transformer
    backbone = _with_pooler(backbone)
    with tempfile.TemporaryDirectory(prefix="multivec-export-") as scratch:
        backbone.save_pretrained(scratch, safe_serialization=True)
        tokenizer.save_pretrained(scratch)
        module = module_class(scratch, model_kwargs={"attn_implementation": "sdpa"}, **kwargs)
        if max_seq_length is not None:
            module.max_seq_length = int(max_seq_length)
        yield module


def _with_pooler(backbone):
    """``backbone`` with its architecture's pooling layer when it was built without one (``add_pooling_layer=False``,
    as the project builds its encoders): the library loads ``AutoModel`` with the layer, and a folder without its
    weights would print a "newly initialized" report at every load. The pooler is never used (the modules read the
    last hidden states); it gets fixed seeded weights."""
    import inspect

    import torch

    if getattr(backbone, "pooler", "absent") is not None:
        return backbone
    if "add_pooling_layer" not in inspect.signature(type(backbone).__init__).parameters:
        return backbone
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        full = type(backbone)(backbone.config)
    missing, unexpected = full.load_state_dict(backbone.state_dict(), strict=False)
    if unexpected or any(not key.startswith("pooler.") for key in missing):
        raise RuntimeError(f"adding a pooler changed more than the pooler (missing {missing}, unexpected {unexpected})")
    return full.eval()
