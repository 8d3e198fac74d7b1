"""Distillation models (Burian 2023) as sentence-transformers folders: the distilled student and the structural
teacher load with ``SentenceTransformer(path)`` and give the vectors this project computes.

- Student (``export_student``): the student's embedding is the mean of its backbone's last token states, special
  tokens included, never normalised (``multivec.distill.student``; the projection heads serve the losses only and
  are not exported). A student that reads each document in one window (``chunk_tokens`` null, or every document's
  ``max_tokens`` fits one chunk) becomes the library's ``Transformer`` + ``Pooling('mean')`` with
  ``max_seq_length = max_tokens + 2`` (the student's ``[CLS]`` + first ``max_tokens`` content tokens + ``[SEP]`` is
  exactly the library's truncation). A chunked student (the demo: 2,048 tokens in chunks of 256) becomes
  ``ChunkedTransformer`` + ``ChunkMeanPooling`` (``multivec.interop.chunked_student``; loading needs
  ``trust_remote_code=True``).
- Teacher (``export_teacher``): the structural teacher is already a sentence-transformers model; the project runs
  its whole module pipeline (Transformer, Pooling, Normalize when the model has one) at the configured
  ``max_seq_length`` (``multivec.distill.teachers.sbert``), so the export is that model saved with that length.
  The contextual teacher, Paragraph Vector (gensim Doc2Vec), infers each new document's vector by gradient steps;
  no sentence-transformers module does that, and its folder is refused with that reason.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from multivec.interop.folders import ExportError, require_files, require_keys
from multivec.interop.model_card import read_metrics, write_model_card

STUDENT_USAGE = """from sentence_transformers import SentenceTransformer

model = SentenceTransformer("{dest}"{trust})
embeddings = model.encode(["A first document.", "A second, longer document."])
print(embeddings.shape)  # (2, {dim})
print(model.similarity(embeddings, embeddings))  # cosine, as the project's evaluations score students"""


def export_student(src: str | os.PathLike, dest: str | os.PathLike, *, metrics: str | os.PathLike | None = None,
                   device: str = "cpu") -> dict[str, Any]:
    """Export the distilled student of ``src`` (``config.json`` + ``model.safetensors``) to ``dest``."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling

    from multivec.distill.training import load_trained
    from multivec.interop.backbones import transformer_module
    from multivec.interop.chunked_student import ChunkedTransformer, ChunkMeanPooling

    folder = require_files(src, "student")
    config = require_keys(folder, "student")
    model = load_trained(folder)
    student, cfg = model.student, model.student_config
    dim = student.hidden_size
    one_window = cfg.chunk_tokens is None or cfg.chunk_tokens - 2 >= cfg.max_tokens
    backbone = student.backbone.eval()
    dest = Path(dest)
    if one_window:
        with transformer_module(backbone, student.tokenizer, cfg.max_tokens + 2) as transformer:
            st = SentenceTransformer(modules=[transformer, Pooling(dim, "mean")], device=device)
            st.save(str(dest))
    else:
        with transformer_module(backbone, student.tokenizer, cfg.chunk_tokens, ChunkedTransformer,
                                max_tokens=cfg.max_tokens, chunk_tokens=cfg.chunk_tokens) as transformer:
            st = SentenceTransformer(modules=[transformer, ChunkMeanPooling(dim)], device=device)
            st.save(str(dest))
    cannot = ["The projection heads (structural, contextual, teacher) trained with the losses: they are not part "
              "of the student's embedding and are not exported."]
    if not one_window:
        cannot.append(f"Reading a document in chunks ({cfg.max_tokens} content tokens in chunks of "
                      f"{cfg.chunk_tokens}, mean-pooled across chunks): the library's Transformer reads one "
                      "window, so this folder uses multivec's ChunkedTransformer and ChunkMeanPooling modules "
                      "(`pip install multivec`, `trust_remote_code=True`).")
    else:
        cannot.append(f"The student reads the first {cfg.max_tokens} content tokens; the library truncates at "
                      f"max_seq_length = {cfg.max_tokens + 2} tokens with the two special tokens, the same input.")
    write_model_card(
        dest, kind="student", title="Distilled document-embedding student (Burian 2023 reproduction, demo)",
        model_class="Sentence Transformer", architecture=repr(st), max_seq_length=cfg.max_tokens + 2 if one_window
        else cfg.max_tokens, dimension=dim, source=folder, base_model=None if cfg.backbone.startswith("tiny-")
        else cfg.backbone,
        training_data=("The distillation pipeline's training documents (`data/built/distill/train.jsonl`), with "
                       "targets from a structural teacher (SBERT) and a contextual teacher (Paragraph Vector) "
                       f"combined by the `{model.loss_config.combination}` rule; see `docs/distill.md`."),
        configuration=config["model"], usage=STUDENT_USAGE.format(dest=dest, dim=dim, trust="" if one_window
                                                                  else ", trust_remote_code=True"),
        cannot_express=cannot, metrics=read_metrics(metrics), metrics_source=str(metrics) if metrics else None)
    return {"kind": "student", "dest": str(dest), "modules": [type(m).__name__ for m in st],
            "trust_remote_code": not one_window, "max_seq_length": st.max_seq_length, "dimension": dim}


def export_teacher(src: str | os.PathLike, dest: str | os.PathLike, *, max_seq_length: int | None = None,
                   metrics: str | os.PathLike | None = None, device: str = "cpu") -> dict[str, Any]:
    """Export the structural teacher ``src`` (a sentence-transformers folder, or ``minilm`` / ``mpnet``) at the
    ``max_seq_length`` the project embeds with (None: the model's own) to ``dest``."""
    from multivec.distill.teachers.sbert import load_teacher, model_folder

    name = str(src)
    if Path(name).is_dir():
        if any(Path(name).glob("part*.safetensors")):
            raise ExportError(name, "a Paragraph Vector (Doc2Vec) teacher: it infers each document's vector by "
                                    "gradient steps, which no sentence-transformers module does; export its "
                                    "embeddings folders instead")
        require_files(name, "teacher")
        _check_modules_json(Path(name))
    folder = model_folder(name)
    model = load_teacher(name, max_seq_length, device=device)
    dest = Path(dest)
    model.save(str(dest))
    normalises = any(type(m).__name__ == "Normalize" for m in model)
    dim = model.get_sentence_embedding_dimension()
    cannot = ["Nothing of the teacher's embedding: the project runs this very module pipeline. Its length mask "
              "(documents longer than the teacher's limit get no structural loss) is a training setting of the "
              "student, not of this model."]
    write_model_card(
        dest, kind="teacher", title="Structural teacher of the distillation reproduction (SBERT, as embedded)",
        model_class="Sentence Transformer", architecture=repr(model), max_seq_length=model.max_seq_length,
        dimension=dim, source=folder, base_model=None,
        training_data="Not trained by this pipeline: a pretrained SBERT model, used as the structural teacher.",
        configuration={"model": name, "max_seq_length": model.max_seq_length, "normalize": normalises},
        usage=STUDENT_USAGE.format(dest=dest, dim=dim, trust=""), cannot_express=cannot,
        metrics=read_metrics(metrics), metrics_source=str(metrics) if metrics else None)
    return {"kind": "teacher", "dest": str(dest), "modules": [type(m).__name__ for m in model],
            "trust_remote_code": False, "max_seq_length": model.max_seq_length, "dimension": dim,
            "normalize": normalises}


def _check_modules_json(folder: Path) -> None:
    """Each module folder ``modules.json`` lists must exist (an older or partial copy names the missing one)."""
    import json

    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ExportError(folder / "modules.json", f"not valid JSON ({err})") from None
    for entry in modules:
        path = folder / entry.get("path", "")
        if entry.get("path") and not path.is_dir():
            raise ExportError(path, f"missing: {folder / 'modules.json'} lists module {entry.get('name')!r} there")
    if not (folder / "config.json").is_file():
        raise ExportError(folder / "config.json", f"missing: the teacher folder {folder} has no transformer config")
