"""Training the distilled student (Burian 2023, §3.1 eq. 3.1, §4) as a plug-in of the shared engine
(``multivec.training``): AdamW with weight-decay groups, cosine schedule with warm-up, gradient
accumulation, clipping, fp16 with a GradScaler, checkpoints and exact resumption are the engine's.

This module holds the distillation side: reading the training documents (``{"id", "text"}`` JSONL) and the
teachers' embeddings (``multivec.distill.embeddings`` folders, aligned by id), the length mask (a document
fits the structural teacher when its teacher tokenisation has <= ``mask_max_tokens`` tokens), length-sorted
batches, the model (student + projection heads + the losses, whose running SoftCCA state is a buffer and
so part of every checkpoint; built from ``multivec.distill.configuration``'s ``StudentConfig`` and
``LossConfig``) and the combined loss of ``multivec.distill.combination``.

``train(...)`` writes into ``out_dir``: ``model.safetensors``, ``config.json`` (student, loss, run),
``metrics.csv``, ``training_summary.json`` and ``checkpoint/``. ``load_trained(out_dir)`` rebuilds it.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

from multivec.distill.combination import combine_losses
from multivec.distill.configuration import LossConfig, StudentConfig
from multivec.distill.losses import contextual_loss, structural_loss
from multivec.distill.projection import STRUCTURAL_MAPS, output_dim, projection_head, single_linear
from multivec.distill.student import Student
from multivec.io import MalformedInputError, read_json, read_jsonl, write_json
from multivec.training.batching import epoch_batches
from multivec.training.distributed import Runtime
from multivec.training.engine import TrainConfig, TrainingTask, train_task

log = logging.getLogger(__name__)

CONFIG_FILE = "config.json"


class DistillModel(nn.Module):
    """Student + heads + losses (the authors' StructuralContextualHead). The student's embedding is its pooled
    state (``student(chunks)``), which every table row scores; the heads serve the losses only: the structural
    head maps it to the structural teacher's dimension (a Linear when the two differ, started by
    ``structural_head_init``), the contextual head projects it for L_C and the teacher head projects the
    contextual teacher (soft_cca, dcca)."""

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
        # setup() starts the head at a fitted map when L_S uses it and it is one Linear; a head with weights
        # that no map starts (structural_head_init random, or hidden layers) keeps PyTorch's random start
        self.structural_head_fitted = bool(loss_config.structural) and single_linear(self.structural_head) is not None \
            and student_config.structural_head_init in STRUCTURAL_MAPS
        has_weights = any(isinstance(m, nn.Linear) for m in self.structural_head.modules())
        if loss_config.structural and has_weights and not self.structural_head_fitted \
                and not student_config.structural_head_trainable:
            raise ValueError(f"distill.student: structural_head_trainable is false, but the structural head "
                             f"({hidden} -> {structural_dim}, hidden layers {list(student_config.structural_head)}, "
                             f"init {student_config.structural_head_init}) keeps a random start, so L_S would pull "
                             f"the student towards a fixed random projection of its teacher; use one Linear started "
                             f"at lstsq or procrustes, or let the head train")
        self.structural_head.requires_grad_(student_config.structural_head_trainable)
        self.structural_dim = structural_dim
        self.structural_loss = structural_loss(loss_config.structural, gamma=loss_config.gamma,
                                               distance=loss_config.max_marginals_distance) \
            if loss_config.structural else None
        self.contextual_head = self.teacher_head = self.contextual_loss = None
        if loss_config.contextual:
            self.contextual_head = projection_head(hidden, student_config.contextual_head, student_config.activation)
            student_out = output_dim(hidden, student_config.contextual_head)
            self.contextual_loss = contextual_loss(loss_config.contextual, dim=student_out,
                                                   top_k=loss_config.cca_top_k,
                                                   regularization=loss_config.cca_regularization,
                                                   delta=loss_config.soft_cca_delta, alpha=loss_config.sdl_alpha,
                                                   normalise=loss_config.sdl_normalise)
            if getattr(self.contextual_loss, "projects_teacher", False):  # soft_cca, dcca
                self.teacher_head = projection_head(contextual_dim, student_config.teacher_head,
                                                    student_config.activation)
                teacher_out = output_dim(contextual_dim, student_config.teacher_head)
                if loss_config.contextual == "soft_cca" and teacher_out != student_out:
                    raise ValueError(f"distill.student: soft_cca needs projections of one width, but "
                                     f"contextual_head ends at {student_out} and teacher_head at {teacher_out}")

    def heads(self) -> list[tuple[str, nn.Module]]:
        """The modules trained from scratch (every part but the student's backbone)."""
        return [(name, module) for name, module in self.named_children() if name != "student"]

    def forward(self, chunks, structural: torch.Tensor, contextual: torch.Tensor, mask: torch.Tensor):
        """(combined loss, {term: float}): L_S (masked mean), L_C and, for SoftCCA, its MSE and both SDLs."""
        pooled = self.student(chunks)
        terms: dict[str, float] = {"mask_share": float(mask.float().mean())}
        ls = lc = None
        if self.structural_loss is not None:
            ls = self.structural_loss(self.structural_head(pooled), structural)
            if mask.sum() > 0:
                terms["structural"] = float((ls.detach() * mask).sum() / mask.sum())
        if self.contextual_loss is not None:
            teacher = self.teacher_head(contextual) if self.teacher_head is not None else contextual
            lc = self.contextual_loss(self.contextual_head(pooled), teacher)
            terms["contextual"] = float(lc.detach())
            terms.update({k: float(v) for k, v in getattr(self.contextual_loss, "last_terms", {}).items()})
        loss = combine_losses(ls, lc, mask, option=self.loss_config.combination, lam=self.loss_config.lam)
        return loss, terms


LOSS_TERMS = ("structural", "contextual", "soft_cca_mse", "sdl_student", "sdl_teacher", "mask_share")


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


class TeacherMismatchError(ValueError):
    """A teacher's embeddings do not cover exactly the training documents (names both files)."""


def aligned_embeddings(folder: str | os.PathLike, ids: Sequence[str],
                       documents_path: str | os.PathLike | None = None) -> np.ndarray:
    """The vectors of ``folder`` (a teacher's or the untrained student's embeddings of the training documents)
    for ``ids``, in that order. Its ids must be exactly the documents' ids: a missing or an extra id stops the
    run, naming both the embeddings and the documents file (a teacher built from other documents)."""
    from multivec.distill.embeddings import read_embeddings

    teacher_ids, vectors, _ = read_embeddings(folder)
    index = {doc_id: row for row, doc_id in enumerate(teacher_ids)}
    missing = [doc_id for doc_id in ids if doc_id not in index]
    extra = sorted(set(index) - set(ids))
    if missing or extra or len(teacher_ids) != len(index):
        documents = documents_path if documents_path is not None else "the training documents"
        detail = []
        if missing:
            detail.append(f"no embedding for {len(missing)} of its {len(ids)} documents (e.g. id {missing[0]!r})")
        if extra:
            detail.append(f"{len(extra)} ids that are not among them (e.g. {extra[0]!r})")
        if len(teacher_ids) != len(index):
            detail.append("repeated ids")
        raise TeacherMismatchError(f"{folder} does not match {documents}: {'; '.join(detail)}. Rebuild the "
                                   f"embeddings of {documents}")
    return np.asarray(vectors, dtype=np.float32)[[index[d] for d in ids]]


def length_mask(texts: Sequence[str], tokenizer_ref: str, max_tokens: int | None) -> np.ndarray:
    """1.0 where the structural teacher reads the whole text (<= max_tokens tokens with specials), else 0.0;
    ``max_tokens`` None: no mask (1.0 everywhere, the authors' ``max_structural_length: null``)."""
    if max_tokens is None:
        return np.ones(len(texts), np.float32)
    from multivec.io.resources import load_tokenizer

    tokenizer = load_tokenizer(tokenizer_ref)
    lengths = [len(ids) for ids in tokenizer(list(texts), add_special_tokens=True)["input_ids"]]
    return (np.asarray(lengths) <= max_tokens).astype(np.float32)


class DistillTask(TrainingTask):
    name = "distill"
    dev_metrics = ("dev_loss",)
    throughput_unit = "documents"
    loss_terms = LOSS_TERMS

    def __init__(self, student_config: StudentConfig, loss_config: LossConfig, cfg: TrainConfig,
                 documents: list[dict[str, str]], structural: np.ndarray, contextual: np.ndarray,
                 student_start: np.ndarray | None = None):
        self.student_config, self.loss_config, self.cfg = student_config, loss_config, cfg
        self.documents, self.structural, self.contextual = documents, structural, contextual
        self.student_start = student_start  # the untrained student's embeddings of the documents (lstsq start)

    def setup(self, out_dir: Path, runtime: Runtime, resuming: bool) -> None:
        from multivec.distill.projection import initialise_contextual_heads, initialise_structural_head
        from multivec.distill.student import embed_texts

        self.model = DistillModel(self.student_config, self.loss_config, self.structural.shape[1],
                                  self.contextual.shape[1])
        texts = [d["text"] for d in self.documents]
        self.tokens = self.model.student.tokenize(texts)
        self.mask = length_mask(texts, self.loss_config.mask_tokenizer, self.loss_config.mask_max_tokens)
        self.lengths = [len(t) for t in self.tokens]
        # L_S only: a document outside the mask carries no loss, so it is never batched (no step without signal)
        self.batched = [i for i in range(len(self.documents))
                        if self.loss_config.contextual is not None or self.mask[i] > 0]
        if len(self.batched) < 2:
            raise ValueError(f"distill: only {len(self.batched)} training documents fit the structural teacher's "
                             f"{self.loss_config.mask_max_tokens} tokens (distill.loss.mask_max_tokens), and a run "
                             "with L_S only trains on nothing else")
        def untrained(rows: list[int]) -> np.ndarray:
            """The untrained student's embeddings of ``rows`` (given, or computed here: same weights, eval mode)."""
            if self.student_start is not None:
                return self.student_start[rows]
            return embed_texts(self.model.student, [texts[i] for i in rows], self.cfg.batch_size)

        head_start = contextual_start = None
        if self.model.structural_head_fitted:
            # fitted on the documents L_S trains on (inside the mask; all when fewer than two are)
            rows = [i for i in range(len(texts)) if self.mask[i] > 0]
            rows = rows if len(rows) >= 2 else list(range(len(texts)))
            head_start = initialise_structural_head(self.model.structural_head, untrained(rows),
                                                    self.structural[rows], self.student_config.structural_head_init)
            head_start["documents"] = len(rows)
        if self.student_config.contextual_head_init == "cca" and self.model.teacher_head is not None:
            rows = list(range(len(texts)))  # L_C reads every document
            contextual_start = initialise_contextual_heads(self.model.contextual_head, self.model.teacher_head,
                                                           untrained(rows), self.contextual[rows])
            if contextual_start is None:
                raise ValueError("distill.student.contextual_head_init=cca needs one Linear per side "
                                 f"(contextual_head {self.student_config.contextual_head}, teacher_head "
                                 f"{self.student_config.teacher_head}: give each one width)")
        self.derived = {"train_documents": len(self.documents), "structural_dim": int(self.structural.shape[1]),
                        "contextual_dim": int(self.contextual.shape[1]),
                        "student_hidden": self.model.student.hidden_size,
                        "mask_share": round(float(self.mask.mean()), 4),
                        "batched_documents": len(self.batched),
                        "unbatched_without_signal": len(self.documents) - len(self.batched),
                        "cut_share": round(float(np.mean([len(t) >= self.student_config.max_tokens
                                                          for t in self.tokens])), 4),
                        "structural_head_start": head_start, "contextual_head_start": contextual_start}

    def run_config(self) -> dict[str, Any]:
        return {"model": {"student": self.student_config.to_dict(), "loss": self.loss_config.to_dict()},
                "derived": self.derived}

    def parameter_groups(self, cfg: TrainConfig) -> list[dict[str, Any]]:
        """The pretrained backbone at ``lr``, the heads (trained from scratch) at ``lr_scratch`` (or ``lr``)."""
        heads = [(f"{name}.{p_name}", p) for name, module in self.model.heads()
                 for p_name, p in module.named_parameters() if p.requires_grad]  # a fixed structural head
        backbone = [(f"student.{name}", p) for name, p in self.model.student.named_parameters()]
        scratch = cfg.lr_scratch if cfg.lr_scratch is not None else cfg.lr
        return [{"params": backbone, "lr": cfg.lr}, {"params": heads, "lr": scratch}]

    def epoch_batches(self, epoch: int) -> list[list[int]]:
        lengths = [self.lengths[i] for i in self.batched]
        batches = epoch_batches(lengths, self.cfg.batch_size, self.cfg.seed, epoch, self.cfg.length_sorted)
        # in-batch negatives and batch statistics need two documents
        return [[self.batched[i] for i in b] for b in batches if len(b) >= 2]

    def make_batch(self, spec: list[int], generator: torch.Generator):
        device = self.model.student.device
        chunks = self.model.student.collate([self.tokens[i] for i in spec]).to(device)
        return (chunks, torch.from_numpy(self.structural[spec]).to(device),
                torch.from_numpy(self.contextual[spec]).to(device), torch.from_numpy(self.mask[spec]).to(device))

    def loss(self, module, batch) -> tuple[torch.Tensor, int, dict[str, float]]:
        if self.loss_config.contextual is None and float(batch[3].sum()) == 0:
            raise RuntimeError("distill: a batch of an L_S-only run has no document inside the length mask; "
                               "it would step AdamW without a loss signal")
        loss, terms = module(*batch)
        return loss, batch[0].n_documents, terms

    def evaluate(self, runtime: Runtime) -> dict[str, float] | None:
        return None  # no dev set: the last weights are the result (see docs/distill.md)

    def save_weights(self, path: Path) -> None:
        from safetensors.torch import save_file

        tmp = Path(path).with_name(Path(path).name + ".tmp")
        save_file({k: v.detach().contiguous().cpu() for k, v in self.model.state_dict().items()}, str(tmp))
        os.replace(tmp, path)

    def load_weights(self, path: Path) -> None:
        from multivec.io.safe_loading import read_safetensors

        self.model.load_state_dict(read_safetensors(path, device=str(self.model.student.device)))

    def save_metadata(self, out_dir: Path, run_config: dict[str, Any]) -> None:
        write_json(Path(out_dir) / CONFIG_FILE, run_config)


def train(student_config: StudentConfig, loss_config: LossConfig, train_config: TrainConfig,
          documents_path: str | os.PathLike, structural_folder: str | os.PathLike,
          contextual_folder: str | os.PathLike, out_dir: str | os.PathLike, *,
          student_folder: str | os.PathLike | None = None,
          _interrupt_after: int | None = None) -> dict[str, Any]:
    """Train (or resume) the student; returns the engine's training summary. ``student_folder``: the untrained
    student's embeddings of the documents (the least-squares start of the structural head; computed when None)."""
    documents = read_documents(documents_path)
    ids = [d["id"] for d in documents]
    start = aligned_embeddings(student_folder, ids, documents_path) if student_folder is not None else None
    task = DistillTask(student_config, loss_config, train_config, documents,
                       aligned_embeddings(structural_folder, ids, documents_path),
                       aligned_embeddings(contextual_folder, ids, documents_path), start)
    return train_task(task, train_config, out_dir, _interrupt_after=_interrupt_after)


def load_trained(out_dir: str | os.PathLike) -> DistillModel:
    """The trained model of ``out_dir`` (``config.json`` + ``model.safetensors``), in eval mode on CPU."""
    from multivec.io.safe_loading import read_safetensors

    out = Path(out_dir)
    run_config = read_json(out / CONFIG_FILE)
    model = DistillModel(StudentConfig.from_dict(run_config["model"]["student"]),
                         LossConfig.from_dict(run_config["model"]["loss"]),
                         run_config["derived"]["structural_dim"], run_config["derived"]["contextual_dim"])
    model.load_state_dict(read_safetensors(out / "model.safetensors"))
    return model.eval()


def embed_documents(documents_path: str | os.PathLike, out: str | os.PathLike, *,
                    model_dir: str | os.PathLike | None = None, student_config: StudentConfig | None = None,
                    batch_size: int = 16, threads: int | None = None, device: str = "auto",
                    teacher_limit: int | None = None) -> dict[str, Any]:
    """Embed ``{"id", "text"}`` documents with the student of ``model_dir`` (trained) or of ``student_config``
    (untrained) into an embeddings folder (``multivec.distill.embeddings``); the embedding is the student's
    pooled state either way (the heads serve the losses only). Returns its meta, which reports the documents
    longer than the student's ``max_tokens`` (truncated) and, with ``teacher_limit`` (the structural teacher's
    input limit in tokens with its two specials), those longer than the teacher's limit. ``device``: ``auto``
    uses the GPU a (SLURM) job was given, else the CPU."""
    from multivec.distill.embeddings import write_embeddings
    from multivec.distill.student import embed_texts, length_report
    from multivec.training.distributed import resolve_device

    if (model_dir is None) == (student_config is None):
        raise ValueError("embed_documents: give exactly one of model_dir (trained) or student_config (untrained)")
    if threads:
        torch.set_num_threads(threads)
    documents = read_documents(documents_path)
    texts = [d["text"] for d in documents]
    if model_dir is not None:
        model = load_trained(model_dir)
        student, name, config = model.student, f"distilled student {Path(model_dir).name}", model.student_config
        if teacher_limit is None:
            teacher_limit = model.loss_config.mask_max_tokens
    else:
        student, name, config = Student(student_config).eval(), "untrained student", student_config
    student.to(resolve_device(device))
    vectors = embed_texts(student, texts, batch_size)
    limits = {"structural_teacher": teacher_limit - 2} if teacher_limit else {}
    lengths = length_report(student, texts, limits)
    if lengths["truncated"]:
        log.warning("%s: %d of %d documents are longer than the student's max_tokens=%d and were truncated "
                    "(longest: %d tokens)", documents_path, lengths["truncated"], len(texts), config.max_tokens,
                    lengths["max_length"])
    meta = {"model": name, "backbone": config.backbone, "dimension": int(vectors.shape[1]), "n": len(texts),
            "truncated_share": lengths["truncated_share"], "max_tokens": config.max_tokens,
            "chunk_tokens": config.chunk_tokens, "lengths": lengths, "documents": str(documents_path)}
    write_embeddings(out, [d["id"] for d in documents], vectors, meta)
    return meta
