"""The configuration of the distilled student (Burian 2023), the ``model`` section of a trained student's
``config.json``: the model (``training.DistillModel``) is built from both and saves both.

- ``StudentConfig``: the student (§3.1, §4.1: backbone, input length, chunks) and its projection heads
  (``distill.student`` in the config; ``student.Student`` and ``projection``);
- ``LossConfig``: the structural and contextual losses, their combination and the length mask (§3.1 eq. 3.1,
  §4.3.2; ``distill.loss``; ``losses`` and ``combination``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from multivec.config.dataclass_config import from_dict
from multivec.distill.combination import COMBINATIONS
from multivec.distill.losses import CONTEXTUAL_LOSSES, STRUCTURAL_LOSSES
from multivec.distill.projection import STRUCTURAL_MAPS

HEAD_INITS = (*STRUCTURAL_MAPS, "random")
CONTEXTUAL_HEAD_INITS = ("cca", "random")


@dataclass
class StudentConfig:
    backbone: str = "minilm"  # a model reference (multivec.io.resources): minilm, tiny-random-bert, a hub id
    max_tokens: int = 512  # content tokens read per document (the rest is cut)
    chunk_tokens: int | None = 256  # sequence length per chunk, specials included; None: one window
    gradient_checkpointing: bool = False
    structural_head: list[int] = field(default_factory=list)  # hidden widths; a Linear to the teacher dim ends it
    contextual_head: list[int] = field(default_factory=lambda: [128])  # student side of L_C
    teacher_head: list[int] = field(default_factory=lambda: [128])  # contextual teacher side (soft_cca, dcca)
    activation: str = "relu"
    # The structural head's start: "lstsq" = the ridge least-squares map from the untrained student's embeddings
    # of the training documents to the structural teacher's (multivec.distill.projection.initialise_structural_head);
    # "procrustes" = the orthogonal map between them (it cannot fit the documents exactly, as lstsq does when
    # they are fewer than the student's dimensions); "random" = PyTorch's default initialisation.
    structural_head_init: str = "procrustes"
    # False: the structural head stays at its start and only the backbone learns L_S, so L_S shapes the scored
    # embedding instead of being absorbed by the head (the thesis's student has no head: Longformer and mpnet
    # are both 768-d; results/experiments/distill_fixed_structural_head). A fixed head must start at a fitted
    # map (lstsq or procrustes): a fixed random one would make L_S imitate a random projection of the teacher.
    structural_head_trainable: bool = False
    # The SoftCCA heads' start: "cca" = the linear CCA of the untrained student's and the contextual teacher's
    # embeddings of the training documents (multivec.distill.projection.initialise_contextual_heads; one Linear
    # per side); "random" = PyTorch's default initialisation (the authors' code).
    contextual_head_init: str = "random"
    freeze_backbone: bool = False  # the sanity row: only the heads train, so the embedding is the untrained one
    seed: int = 0  # initialisation of tiny random backbones and the heads

    def __post_init__(self) -> None:
        if self.structural_head_init not in HEAD_INITS:
            raise ValueError(f"distill.student.structural_head_init={self.structural_head_init!r}: expected one of "
                             f"{', '.join(HEAD_INITS)}")
        if self.contextual_head_init not in CONTEXTUAL_HEAD_INITS:
            raise ValueError(f"distill.student.contextual_head_init={self.contextual_head_init!r}: expected one of "
                             f"{', '.join(CONTEXTUAL_HEAD_INITS)}")
        if self.max_tokens < 1:
            raise ValueError(f"distill.student.max_tokens={self.max_tokens}: must be >= 1")
        if self.chunk_tokens is not None and self.chunk_tokens < 3:
            raise ValueError(f"distill.student.chunk_tokens={self.chunk_tokens}: must be >= 3 (two special tokens)")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "StudentConfig":
        return from_dict(cls, data, "StudentConfig")


@dataclass
class LossConfig:
    structural: str | None = "cosine"  # mse | cosine | max_marginals | None (no L_S)
    contextual: str | None = "soft_cca"  # cca | soft_cca | dcca | None (no L_C)
    combination: str = "authors"  # authors | eq_3_1 | convex | unweighted (multivec.distill.combination)
    lam: float = 0.5  # lambda of eq. 3.1 (authors: 0.5 means no weighting)
    gamma: float = 1.0  # max-marginals
    max_marginals_distance: str = "cosine"
    cca_top_k: int | None = None
    cca_regularization: float = 1e-3
    soft_cca_delta: float = 0.03
    sdl_alpha: float = 0.95
    sdl_normalise: bool = True  # SDL divided by k^2 - k (the authors' code); false: the plain sum (thesis eq. 4.10)
    # The structural teacher's input limit: L_S counts only for documents it reads whole (the authors' cos_final);
    # None: no mask, L_S for every document (the authors' mm_mse_final, max_structural_length: null)
    mask_max_tokens: int | None = 384
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
        if self.mask_max_tokens is not None and self.mask_max_tokens < 1:
            raise ValueError(f"distill.loss.mask_max_tokens={self.mask_max_tokens}: must be >= 1 or null (no mask)")
        if self.combination not in COMBINATIONS:
            raise ValueError(f"distill.loss.combination={self.combination!r}: expected one of "
                             f"{', '.join(COMBINATIONS)}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "LossConfig":
        return from_dict(cls, data, "LossConfig")
