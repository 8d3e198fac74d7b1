"""A TSDAE model of the NUGGET zoo (``bottleneck: mean``, variant ``tsdae``; Wang et al. 2021 as NUGGET §6.1.2
uses it) as a single-vector ``SentenceTransformer`` folder (``export_tsdae``).

TSDAE's document vector is the masked mean of its encoder's last-layer token states, special tokens included
(``multivec.nugget.modeling.NuggetModel.encode`` with the mean bottleneck; nothing is frozen, so every layer is
trained): the library's ``Transformer`` on the trained encoder + ``Pooling('mean')``, truncated at the encoder's
position limit as ``multivec.nugget.encoding`` encodes. No normalisation (the project scores TSDAE rows with
cosine, ``model.similarity``'s default). Loads with ``SentenceTransformer(path)``, no remote code.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from multivec.interop.folders import ExportError
from multivec.interop.model_card import read_metrics, write_model_card

USAGE = """from sentence_transformers import SentenceTransformer

model = SentenceTransformer("{dest}")
vectors = model.encode(["A first document.", "A second document."])  # ({dim},) each
print(model.similarity(vectors, vectors))  # cosine, as the project scores the TSDAE rows"""


def export_tsdae(src: str | os.PathLike, dest: str | os.PathLike, *, metrics: str | os.PathLike | None = None,
                 device: str = "cpu") -> dict[str, Any]:
    """Export the TSDAE model of ``src`` to ``dest`` as a ``SentenceTransformer`` folder."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling

    from multivec.encodings import encoder_token_limit
    from multivec.interop.backbones import transformer_module
    from multivec.interop.nugget_export import bottom_backbone, load_nugget_model

    model, saved = load_nugget_model(src, "tsdae")
    cfg = model.config
    folder = Path(src)
    if cfg.bottleneck != "mean":
        raise ExportError(folder / "config.json", f"bottleneck {cfg.bottleneck!r} is not TSDAE's 'mean': export it "
                                                  "with --kind nugget")
    if cfg.architecture != "bert_decoder":
        raise ExportError(folder / "config.json", f"architecture {cfg.architecture!r}: only BERT-style encoders "
                                                  "export (an mBART encoder would load as the whole seq2seq model)")
    limit = encoder_token_limit(model.backbone_config)
    dim = model.encoder.hidden_size
    dest = Path(dest)
    with transformer_module(bottom_backbone(model, model.encoder.num_layers), model.processor.source_tokenizer,
                            limit) as transformer:
        st = SentenceTransformer(modules=[transformer, Pooling(dim, "mean")], device=device)
        st.save(str(dest))
    write_model_card(
        dest, kind="tsdae", title="TSDAE single-vector encoder (baseline of the NUGGET reproduction)",
        model_class="Sentence Transformer", architecture=repr(st), max_seq_length=limit, dimension=dim,
        source=folder, base_model=None if cfg.encoder.startswith("tiny-") else cfg.encoder,
        training_data=(f"The NUGGET zoo's {cfg.objective.upper()} training documents with deletion noise "
                       f"(p = {cfg.noise_deletion}), decoded from the one mean vector; see `docs/nugget.md`."),
        configuration=saved["model"], usage=USAGE.format(dest=dest, dim=dim),
        cannot_express=["The decoder and the deletion noise of training: not part of the encoder, not exported."],
        metrics=read_metrics(metrics), metrics_source=str(metrics) if metrics else None)
    return {"kind": "tsdae", "dest": str(dest), "modules": [type(m).__name__ for m in st],
            "trust_remote_code": False, "max_seq_length": limit, "dimension": dim}
