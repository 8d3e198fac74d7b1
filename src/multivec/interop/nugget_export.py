"""A trained NUGGET zoo model (``models/nugget/<objective>/<variant>/seed<seed>/``) as a sentence-transformers
``MultiVectorEncoder`` folder (``export_nugget``).

The folder holds the library's ``Transformer`` on the frozen bottom (embeddings and layers 1..l of the trained
encoder) and ``multivec.interop.nugget_module.NuggetSelector`` (scorer, TopK with k = ceil(n·r), feedback, layers
l+1..L, W^V). Loading needs ``trust_remote_code=True`` (the module is multivec's) and ``multivec`` installed::

    MultiVectorEncoder(path, trust_remote_code=True).encode_document(texts)  # per text: k x d nuggets

Inputs are truncated at the encoder's position limit (512 for MiniLM), as ``multivec.nugget.encoding`` encodes
whole documents. Supported: ``architecture: bert_decoder`` (the demo) with the learned, chunking or random
selector. Refused with the reason: mBART encoders (paper scale: the library's Transformer would load the whole
seq2seq model), the sentence-boundary selector (needs each text's sentence ends). The shared r = 1 model
(``bottleneck: tokens``) exports as every token state of the full encoder (no selector module); TSDAE
(``bottleneck: mean``) is ``multivec.interop.tsdae_export``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from multivec.interop.folders import ExportError, require_files, require_keys
from multivec.interop.model_card import read_metrics, write_model_card

USAGE = """from sentence_transformers import MultiVectorEncoder

model = MultiVectorEncoder("{dest}", trust_remote_code=True)
nuggets = model.encode_document(["A first document.", "A second document."])
print([v.shape for v in nuggets])  # k = ceil(n * {ratio}) nugget vectors of {dim} dimensions per document
# The project's score (MaxSim-mean over unit vectors, NUGGET eq. 10):
queries = model.encode_query(["A query document."], normalize_embeddings=True)
documents = model.encode_document(["A first document.", "A second document."], normalize_embeddings=True)
print(model.similarity(queries, documents))  # similarity_fn_name = "meanmaxsim\""""


def load_nugget_model(folder: str | os.PathLike, kind: str = "nugget"):
    """``NuggetModel.from_pretrained`` after the checks that name a missing file or an older layout."""
    from multivec.nugget.modeling import NuggetModel

    folder = require_files(folder, kind)
    config = require_keys(folder, kind)
    if not (folder / "backbone" / "config.json").is_file():
        raise ExportError(folder / "backbone" / "config.json", f"missing: the {kind} folder {folder} has no encoder "
                                                              "configuration")
    return NuggetModel.from_pretrained(folder), config


def bottom_backbone(model, layers: int):
    """A BERT holding ``model``'s (trained) embeddings and encoder layers 1..``layers``."""
    import copy

    from transformers import BertModel

    bert = model.encoder.bert
    config = copy.deepcopy(bert.config)
    config.num_hidden_layers = int(layers)
    bottom = BertModel(config, add_pooling_layer=False)
    keep = {k: v for k, v in bert.state_dict().items()
            if k.startswith("embeddings.") or (k.startswith("encoder.layer.") and int(k.split(".")[2]) < layers)}
    missing, unexpected = bottom.load_state_dict(keep, strict=False)
    if missing or unexpected:
        raise RuntimeError(f"frozen bottom: weights do not match (missing {missing}, unexpected {unexpected})")
    return bottom.eval()


def export_nugget(src: str | os.PathLike, dest: str | os.PathLike, *, metrics: str | os.PathLike | None = None,
                  device: str = "cpu") -> dict[str, Any]:
    """Export the NUGGET model of ``src`` to ``dest`` as a ``MultiVectorEncoder`` folder."""
    from sentence_transformers import MultiVectorEncoder

    from multivec.encodings import encoder_token_limit
    from multivec.interop.backbones import transformer_module
    from multivec.interop.nugget_module import NuggetSelector

    model, saved = load_nugget_model(src)
    cfg = model.config
    folder = Path(src)
    if cfg.bottleneck == "mean":
        raise ExportError(folder / "config.json", "bottleneck 'mean' is a TSDAE model: export it with --kind tsdae")
    if cfg.architecture != "bert_decoder":
        raise ExportError(folder / "config.json", f"architecture {cfg.architecture!r}: only the demo's BERT-style "
                                                  "encoders export (an mBART encoder would load as the whole "
                                                  "seq2seq model in sentence-transformers' Transformer)")
    if cfg.bottleneck == "nuggets" and cfg.selector == "sentence_boundary":
        raise ExportError(folder / "config.json", "selector 'sentence_boundary' needs each text's sentence ends, "
                                                  "which MultiVectorEncoder.encode cannot pass")
    limit = encoder_token_limit(model.backbone_config)
    tokenizer = model.processor.source_tokenizer
    dest = Path(dest)
    if cfg.bottleneck == "tokens":
        bottom = bottom_backbone(model, model.encoder.num_layers)
        with transformer_module(bottom, tokenizer, limit) as transformer:
            st = MultiVectorEncoder(modules=[transformer], device=device, similarity_fn_name="meanmaxsim")
            st.save(str(dest))
    else:
        bottom = bottom_backbone(model, cfg.scorer_layer)
        chunk_ids = sorted(model.rule_selector.chunk_final_ids) if model.rule_selector is not None else []
        selector = NuggetSelector(model.backbone_config.to_dict(), cfg.scorer_layer, cfg.ratio, cfg.selector,
                                  bool(cfg.feedback), chunk_ids, cfg.seed)
        own = model.encoder.layers
        for i, layer in enumerate(selector.layers):
            layer.load_state_dict(own[cfg.scorer_layer + i].state_dict())
        if selector.scorer is not None:
            selector.scorer.load_state_dict(model.scorer.state_dict())
        if selector.type_embedding is not None:
            selector.type_embedding.load_state_dict(model.type_embedding.state_dict())
        selector.value_projection.load_state_dict(model.value_projection.state_dict())
        with transformer_module(bottom, tokenizer, limit) as transformer:
            st = MultiVectorEncoder(modules=[transformer, selector], device=device, similarity_fn_name="meanmaxsim")
            st.save(str(dest))
    dim = model.encoder.hidden_size
    cannot = [
        "Normalisation at scoring time: the folder returns the nuggets as the project's encodings store them "
        "(not unit length); the project's MaxSim-mean (eq. 10) scores unit vectors, so pass "
        "`normalize_embeddings=True` to encode_query/encode_document before `model.similarity` (meanmaxsim).",
        "Query-side settings: the project encodes a query document exactly as a candidate (the same k = ceil(n r) "
        "selection on both sides); encode_query and encode_document therefore give the same vectors here, and "
        "no query length, query expansion or query prompt applies.",
        "The decoder (reconstruction or translation) and the residual connection of the scores into its "
        "cross-attention (eq. 5): they serve training only and are not exported.",
        "The frozen bottom's shared cache (multivec.nugget.frozen_bottom): the folder recomputes the bottom.",
    ]
    ratio_text = "1 (every token)" if cfg.bottleneck == "tokens" else cfg.ratio
    write_model_card(
        dest, kind="nugget", title=f"NUGGET multi-vector encoder (Qin & Van Durme 2023 reproduction, r = {ratio_text})",
        model_class="Multi-Vector Encoder (sentence_transformers.MultiVectorEncoder)", architecture=repr(st),
        max_seq_length=limit, dimension=dim, source=folder,
        base_model=None if cfg.encoder.startswith("tiny-") else cfg.encoder,
        training_data=(f"The NUGGET zoo's {cfg.objective.upper()} training documents "
                       "(autoencoding: English text; translation: English to Chinese), trained to reconstruct or "
                       "translate each document from its nuggets; see `docs/nugget.md`."),
        configuration=saved["model"], usage=USAGE.format(dest=dest, ratio=cfg.ratio, dim=dim),
        cannot_express=cannot, metrics=read_metrics(metrics), metrics_source=str(metrics) if metrics else None,
        pipeline_tag="feature-extraction", extra_tags=["multi-vector", "late-interaction"])
    return {"kind": "nugget", "dest": str(dest), "modules": [type(m).__name__ for m in st],
            "trust_remote_code": cfg.bottleneck != "tokens", "max_seq_length": limit, "dimension": dim,
            "ratio": cfg.ratio, "bottleneck": cfg.bottleneck}
