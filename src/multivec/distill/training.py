"""Training the distilled student (Burian 2023, §3.1 eq. 3.1, §4) as a plug-in of the shared engine
(``multivec.training``): AdamW with weight-decay groups, cosine schedule with warm-up, gradient
accumulation, clipping, fp16 with a GradScaler, checkpoints and exact resumption are the engine's.

This module holds the distillation side: reading the training documents (``{"id", "text"}`` JSONL) and the
teachers' embeddings (``multivec.distill.embeddings`` folders, aligned by id), the length mask (a document
fits the structural teacher when its teacher tokenisation has <= ``mask_max_tokens`` tokens), length-sorted
batches, the model (student + projection heads + the losses, whose running SoftCCA state is a buffer and
so part of every checkpoint) and the combined loss of ``multivec.distill.combination``.

``train(...)`` writes into ``out_dir``: ``model.safetensors``, ``config.json`` (student, loss, run),
``metrics.csv``, ``training_summary.json`` and ``checkpoint/``. ``load_trained(out_dir)`` rebuilds it.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

from multivec.distill.combination import COMBINATIONS, combine_losses
from multivec.distill.losses import CONTEXTUAL_LOSSES, STRUCTURAL_LOSSES, contextual_loss, structural_loss
from multivec.distill.projection import output_dim, projection_head
from multivec.distill.student import Student, StudentConfig
from multivec.io import MalformedInputError, read_json, read_jsonl, write_json
from multivec.nugget.configuration import _from_dict
from multivec.nugget.training import epoch_batches
from multivec.training.distributed import Runtime
from multivec.training.engine import TrainConfig, TrainingTask, train_task

log = logging.getLogger(__name__)

CONFIG_FILE = "config.json"


@dataclass
class LossConfig:
    structural: str | None = "cosine"  # mse | cosine | max_marginals | None (no L_S)
    contextual: str | None = "soft_cca"  # cca | soft_cca | dcca | None (no L_C)
    combination: str = "convex"  # eq_3_1 | convex | unweighted (multivec.distill.combination)
    lam: float = 0.5  # lambda of eq. 3.1
    gamma: float = 1.0  # max-marginals
    max_marginals_distance: str = "cosine"
    cca_top_k: int | None = None
    cca_regularization: float = 1e-3
    soft_cca_delta: float = 0.03
    sdl_alpha: float = 0.95
    mask_max_tokens: int = 384  # structural teacher's input limit
    mask_tokenizer: str = "minilm"  # tokenizer counting the structural teacher's tokens

    def __post_init__(self) -> None:
        if self.structural is None and self.contextual is None:
            raise ValueError("distill.loss: structural and contextual are both null: nothing to train on")
        if self.structural is not None and self.structural not in STRUCTURAL_LOSSES:
            raise ValueError(f"distill.loss.structural={self.structural!r}: expected one of "
                             f"{', '.join(STRUCTURAL_LOSSES)} or null")
        if self.contextual is not None and self.contextual not in CONTEXTUAL_LOSSES:
            raise ValueError(f"distill.loss.contextual={self.contextual!r}: expected one of "
                             f"{', '.join(CONTEXTUAL_LOSSES)} or null")
        if self.combination not in COMBINATIONS:
            raise ValueError(f"distill.loss.combination={self.combination!r}: expected one of "
                             f"{', '.join(COMBINATIONS)}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "LossConfig":
        return _from_dict(cls, data, "LossConfig")


class DistillModel(nn.Module):
    """Student + heads + losses. ``embed_pooled(pooled)`` is the student's output embedding: the pooled
    state through the structural head (which ends in the structural teacher's dimension)."""

    def __init__(self, student_config: StudentConfig, loss_config: LossConfig, structural_dim: int,
                 contextual_dim: int):
        super().__init__()
        self.student_config, self.loss_config = student_config, loss_config
        self.student = Student(student_config)
        torch.manual_seed(student_config.seed)
        hidden = self.student.hidden_size
        layers = list(student_config.structural_head)
        if output_dim(hidden, layers) != structural_dim:
            layers.append(structural_dim)
        self.structural_head = projection_head(hidden, layers, student_config.activation)
        self.structural_dim = structural_dim
        self.structural_loss = structural_loss(loss_config.structural, gamma=loss_config.gamma,
                                               distance=loss_config.max_marginals_distance) \
            if loss_config.structural else None
        self.contextual_head = self.teacher_head = self.contextual_loss = None
        if loss_config.contextual:
            self.contextual_head = projection_head(structural_dim, student_config.contextual_head,
                                                   student_config.activation)
            student_out = output_dim(structural_dim, student_config.contextual_head)
            self.contextual_loss = contextual_loss(loss_config.contextual, dim=student_out,
                                                   top_k=loss_config.cca_top_k,
                                                   regularization=loss_config.cca_regularization,
                                                   delta=loss_config.soft_cca_delta, alpha=loss_config.sdl_alpha)
            if getattr(self.contextual_loss, "projects_teacher", False):  # soft_cca, dcca
                self.teacher_head = projection_head(contextual_dim, student_config.teacher_head,
                                                    student_config.activation)
                teacher_out = output_dim(contextual_dim, student_config.teacher_head)
                if loss_config.contextual == "soft_cca" and teacher_out != student_out:
                    raise ValueError(f"distill.student: soft_cca needs projections of one width, but "
                                     f"contextual_head ends at {student_out} and teacher_head at {teacher_out}")

    def embed_pooled(self, pooled: torch.Tensor) -> torch.Tensor:
        return self.structural_head(pooled)

    def forward(self, chunks, structural: torch.Tensor, contextual: torch.Tensor, mask: torch.Tensor):
        output = self.embed_pooled(self.student(chunks))
        ls = self.structural_loss(output, structural) if self.structural_loss is not None else None
        lc = None
        if self.contextual_loss is not None:
            teacher = self.teacher_head(contextual) if self.teacher_head is not None else contextual
            lc = self.contextual_loss(self.contextual_head(output), teacher)
        return combine_losses(ls, lc, mask, option=self.loss_config.combination, lam=self.loss_config.lam)


# -- data ------------------------------------------------------------------------------------------
def read_documents(path: str | os.PathLike) -> list[dict[str, str]]:
    rows = read_jsonl(path)
    if not rows:
        raise MalformedInputError(path, None, "no documents")
    seen = set()
    for number, row in enumerate(rows, start=1):
        for key in ("id", "text"):
            if not isinstance(row.get(key), str):
                raise MalformedInputError(path, number, f"field {key!r} missing or not a string")
        if row["id"] in seen:
            raise MalformedInputError(path, number, f"duplicate id {row['id']!r}")
        seen.add(row["id"])
    return rows


def aligned_embeddings(folder: str | os.PathLike, ids: Sequence[str]) -> np.ndarray:
    """The teacher's vectors of ``ids`` in that order; an id it lacks is an error naming the folder."""
    from multivec.distill.embeddings import read_embeddings

    teacher_ids, vectors, _ = read_embeddings(folder)
    index = {doc_id: row for row, doc_id in enumerate(teacher_ids)}
    missing = [doc_id for doc_id in ids if doc_id not in index]
    if missing:
        raise KeyError(f"{folder}: no embedding for {len(missing)} of {len(ids)} documents "
                       f"(e.g. id {missing[0]!r}); rebuild the teacher's embeddings of these documents")
    return np.asarray(vectors, dtype=np.float32)[[index[d] for d in ids]]


def length_mask(texts: Sequence[str], tokenizer_ref: str, max_tokens: int) -> np.ndarray:
    """1.0 where the structural teacher reads the whole text (<= max_tokens tokens with specials), else 0.0."""
    from multivec.resources import load_tokenizer

    tokenizer = load_tokenizer(tokenizer_ref)
    lengths = [len(ids) for ids in tokenizer(list(texts), add_special_tokens=True)["input_ids"]]
    return (np.asarray(lengths) <= max_tokens).astype(np.float32)


class DistillTask(TrainingTask):
    name = "distill"
    dev_metrics = ("dev_loss",)
    throughput_unit = "documents"

    def __init__(self, student_config: StudentConfig, loss_config: LossConfig, cfg: TrainConfig,
                 documents: list[dict[str, str]], structural: np.ndarray, contextual: np.ndarray):
        self.student_config, self.loss_config, self.cfg = student_config, loss_config, cfg
        self.documents, self.structural, self.contextual = documents, structural, contextual

    def setup(self, out_dir: Path, runtime: Runtime, resuming: bool) -> None:
        self.model = DistillModel(self.student_config, self.loss_config, self.structural.shape[1],
                                  self.contextual.shape[1])
        texts = [d["text"] for d in self.documents]
        self.tokens = self.model.student.tokenize(texts)
        self.mask = length_mask(texts, self.loss_config.mask_tokenizer, self.loss_config.mask_max_tokens)
        self.lengths = [len(t) for t in self.tokens]
        self.derived = {"train_documents": len(self.documents), "structural_dim": int(self.structural.shape[1]),
                        "contextual_dim": int(self.contextual.shape[1]),
                        "student_hidden": self.model.student.hidden_size,
                        "mask_share": round(float(self.mask.mean()), 4),
                        "cut_share": round(float(np.mean([len(t) >= self.student_config.max_tokens
                                                          for t in self.tokens])), 4)}

    def run_config(self) -> dict[str, Any]:
        return {"model": {"student": self.student_config.to_dict(), "loss": self.loss_config.to_dict()},
                "derived": self.derived}

    def epoch_batches(self, epoch: int) -> list[list[int]]:
        batches = epoch_batches(self.lengths, self.cfg.batch_size, self.cfg.seed, epoch, self.cfg.length_sorted)
        return [b for b in batches if len(b) >= 2]  # in-batch negatives and batch statistics need two documents

    def make_batch(self, spec: list[int], generator: torch.Generator):
        device = self.model.student.device
        chunks = self.model.student.collate([self.tokens[i] for i in spec]).to(device)
        return (chunks, torch.from_numpy(self.structural[spec]).to(device),
                torch.from_numpy(self.contextual[spec]).to(device), torch.from_numpy(self.mask[spec]).to(device))

    def loss(self, module, batch) -> tuple[torch.Tensor, int]:
        return module(*batch), batch[0].n_documents

    def evaluate(self, runtime: Runtime) -> dict[str, float] | None:
        return None  # no dev set: the last weights are the result (see docs/decisions.md)

    def save_weights(self, path: Path) -> None:
        from safetensors.torch import save_file

        tmp = Path(path).with_name(Path(path).name + ".tmp")
        save_file({k: v.detach().contiguous().cpu() for k, v in self.model.state_dict().items()}, str(tmp))
        os.replace(tmp, path)

    def load_weights(self, path: Path) -> None:
        from multivec.safe_loading import read_safetensors

        self.model.load_state_dict(read_safetensors(path, device=str(self.model.student.device)))

    def save_metadata(self, out_dir: Path, run_config: dict[str, Any]) -> None:
        write_json(Path(out_dir) / CONFIG_FILE, run_config)


def train(student_config: StudentConfig, loss_config: LossConfig, train_config: TrainConfig,
          documents_path: str | os.PathLike, structural_folder: str | os.PathLike,
          contextual_folder: str | os.PathLike, out_dir: str | os.PathLike, *,
          _interrupt_after: int | None = None) -> dict[str, Any]:
    """Train (or resume) the student; returns the engine's training summary."""
    documents = read_documents(documents_path)
    ids = [d["id"] for d in documents]
    task = DistillTask(student_config, loss_config, train_config, documents,
                       aligned_embeddings(structural_folder, ids), aligned_embeddings(contextual_folder, ids))
    return train_task(task, train_config, out_dir, _interrupt_after=_interrupt_after)


def load_trained(out_dir: str | os.PathLike) -> DistillModel:
    """The trained model of ``out_dir`` (``config.json`` + ``model.safetensors``), in eval mode on CPU."""
    from multivec.safe_loading import read_safetensors

    out = Path(out_dir)
    run_config = read_json(out / CONFIG_FILE)
    model = DistillModel(StudentConfig.from_dict(run_config["model"]["student"]),
                         LossConfig.from_dict(run_config["model"]["loss"]),
                         run_config["derived"]["structural_dim"], run_config["derived"]["contextual_dim"])
    model.load_state_dict(read_safetensors(out / "model.safetensors"))
    return model.eval()


def embed_documents(documents_path: str | os.PathLike, out: str | os.PathLike, *,
                    model_dir: str | os.PathLike | None = None, student_config: StudentConfig | None = None,
                    batch_size: int = 16, threads: int | None = None, device: str = "auto") -> dict[str, Any]:
    """Embed ``{"id", "text"}`` documents with the trained student of ``model_dir`` (pooled state through its
    structural head), or with the untrained student of ``student_config`` (pooled state only), into an
    embeddings folder (``multivec.distill.embeddings``); returns its meta. ``device``: ``auto`` uses the
    GPU a (SLURM) job was given, else the CPU."""
    from multivec.distill.embeddings import write_embeddings
    from multivec.training.distributed import resolve_device
    from multivec.distill.student import embed_texts

    if (model_dir is None) == (student_config is None):
        raise ValueError("embed_documents: give exactly one of model_dir (trained) or student_config (untrained)")
    if threads:
        torch.set_num_threads(threads)
    documents = read_documents(documents_path)
    texts = [d["text"] for d in documents]
    if model_dir is not None:
        model = load_trained(model_dir)
        student, encode, name = model.student, model.embed_pooled, f"distilled student {Path(model_dir).name}"
        config = model.student_config
    else:
        student, encode, name, config = Student(student_config).eval(), (lambda x: x), "untrained student", \
            student_config
    if model_dir is not None:
        model.to(resolve_device(device))
    else:
        student.to(resolve_device(device))
    vectors = embed_texts(encode, student, texts, batch_size)
    cut = float(np.mean([len(t) >= config.max_tokens for t in student.tokenize(texts)]))
    meta = {"model": name, "backbone": config.backbone, "dimension": int(vectors.shape[1]), "n": len(texts),
            "truncated_share": round(cut, 4), "max_tokens": config.max_tokens, "chunk_tokens": config.chunk_tokens,
            "documents": str(documents_path)}
    write_embeddings(out, [d["id"] for d in documents], vectors, meta)
    return meta
