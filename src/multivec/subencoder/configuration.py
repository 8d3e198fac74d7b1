"""The sub-sentence encoder's configuration (Chen et al. 2023, §3.1, §4.1; Table 5's output dimension and PCA
projection): which backbone, which head, the output dimension and the training length. ``SubEncoder``
(``model.py``) is built from it and saves it in its folder's ``config.json``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

HEADS = ("mlp", "none")


@dataclass
class SubEncoderConfig:
    encoder: str = "minilm"  # a reference multivec.io.resources.resolve_model accepts
    head: str = "mlp"  # "mlp" (the SubEncoder) | "none" (untrained base encoder, App. C.1 baselines)
    output_dim: int | None = None  # None: the encoder's hidden size (paper §4.1); 64 for Table 5
    mlp_hidden: int | None = None  # None: the encoder's hidden size
    max_tokens: int = 128  # sentences longer than this (special tokens included) are truncated
    # A linear map fitted after training and appended to the MLP (Table 5's PCA row; pca_projection.py);
    # None: none. Never trained: the model is the full SubEncoder followed by this projection.
    projection_dim: int | None = None

    def __post_init__(self) -> None:
        if self.head not in HEADS:
            raise ValueError(f"subencoder.model.head={self.head!r}: expected one of {', '.join(HEADS)}")
        if self.projection_dim is not None and self.head != "mlp":
            raise ValueError("subencoder.model.projection_dim needs head 'mlp' (it projects the SubEncoder's output)")
        for key in ("output_dim", "mlp_hidden", "projection_dim"):
            value = getattr(self, key)
            if value is not None and value < 1:
                raise ValueError(f"subencoder.model.{key}={value}: must be >= 1 or null")
        if self.max_tokens < 3:
            raise ValueError(f"subencoder.model.max_tokens={self.max_tokens}: must be >= 3")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SubEncoderConfig":
        from multivec.config.dataclass_config import from_dict

        return from_dict(cls, data, "SubEncoderConfig")
