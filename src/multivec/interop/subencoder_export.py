"""A trained sub-sentence encoder (Chen et al. 2023; ``multivec.subencoder``) as a sentence-transformers folder
(``export_subencoder``): the library's ``Transformer`` + ``multivec.interop.subencoder_module.PropositionPooling``,
loaded with ``SentenceTransformer(path, trust_remote_code=True)``; one vector per proposition comes from
``multivec.interop.encode_propositions(model, sentences, spans)``.

Refused with the reason: a model without the MLP head (``head: none``, the untrained App. C.1 baselines, whose
``full_mask`` and ``token_subset`` strategies change the encoder's input per proposition) and T5 backbones
(sentence-t5, gtr-t5: sentence-transformers would load the encoder-decoder, not the encoder stack the project
runs).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from multivec.interop.folders import ExportError, require_files, require_keys
from multivec.interop.model_card import read_metrics, write_model_card

USAGE = """from sentence_transformers import SentenceTransformer
from multivec.interop import encode_propositions

model = SentenceTransformer("{dest}", trust_remote_code=True)
sentence = "The cat sat on the mat while the dog slept."
spans = [[[0, 23]], [[24, 43]]]  # two propositions, each a list of [start, end) character spans
vectors = encode_propositions(model, [sentence], [spans])[0]  # ({dim},) per proposition: shape (2, {dim})"""


def export_subencoder(src: str | os.PathLike, dest: str | os.PathLike, *, metrics: str | os.PathLike | None = None,
                      device: str = "cpu") -> dict[str, Any]:
    """Export the SubEncoder of ``src`` (``config.json``, ``backbone/``, ``model.safetensors``) to ``dest``."""
    from sentence_transformers import SentenceTransformer

    from multivec.interop.backbones import transformer_module
    from multivec.interop.subencoder_module import PropositionPooling
    from multivec.subencoder.model import SubEncoder

    folder = require_files(src, "subencoder")
    saved = require_keys(folder, "subencoder")
    for name in ("config.json",):
        if not (folder / "backbone" / name).is_file():
            raise ExportError(folder / "backbone" / name, f"missing: the subencoder folder {folder} has no "
                                                          "encoder configuration in backbone/")
    model = SubEncoder.load(folder)
    cfg = model.config
    if cfg.head != "mlp":
        raise ExportError(folder / "config.json", "head 'none' is an untrained baseline encoder (App. C.1), not a "
                                                  "SubEncoder: nothing to export")
    if model.backbone_config.model_type in ("t5", "mt5"):
        raise ExportError(folder / "backbone" / "config.json", "a T5 backbone: sentence-transformers would load "
                                                               "the encoder-decoder, not the encoder stack")
    linears = [m for m in model.head if isinstance(m, __import__("torch").nn.Linear)]
    special = sorted(set(model.tokenizer.all_special_ids))
    pooling = PropositionPooling(model.hidden_size, linears[0].out_features, linears[1].out_features,
                                 cfg.projection_dim, special)
    pooling.head.load_state_dict(model.head.state_dict())
    dest = Path(dest)
    with transformer_module(model.encoder, model.tokenizer, cfg.max_tokens) as transformer:
        st = SentenceTransformer(modules=[transformer, pooling], device=device)
        st.save(str(dest))
    dim = model.output_dim
    cannot = ["Proposition spans as an input: `SentenceTransformer.encode` takes texts only, so one vector per "
              "proposition comes from `multivec.interop.encode_propositions(model, sentences, spans)`, which "
              "passes the subword masks to the model's forward; `model.encode(sentences)` pools the whole "
              "sentence as one proposition.",
              f"Inputs are truncated at the training length ({cfg.max_tokens} tokens); a proposition cut away "
              "by truncation is an error, as in the project."]
    write_model_card(
        dest, kind="subencoder", title="Sub-sentence encoder (Chen et al. 2023 reproduction, demo)",
        model_class="Sentence Transformer (one vector per proposition through multivec.interop)",
        architecture=repr(st), max_seq_length=cfg.max_tokens, dimension=dim, source=folder,
        base_model=None if cfg.encoder.startswith("tiny-") else cfg.encoder,
        training_data=("The sub-sentence pipeline's propositions aligned to their sentences "
                       "(`data/built/subencoder/train.jsonl`), trained contrastively on proposition pairs; see "
                       "`docs/subencoder.md`."),
        configuration=saved["model"], usage=USAGE.format(dest=dest, dim=dim), cannot_express=cannot,
        metrics=read_metrics(metrics), metrics_source=str(metrics) if metrics else None)
    return {"kind": "subencoder", "dest": str(dest), "modules": [type(m).__name__ for m in st],
            "trust_remote_code": True, "max_seq_length": cfg.max_tokens, "dimension": dim}
