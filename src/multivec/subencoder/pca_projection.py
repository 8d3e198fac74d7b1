"""A reduced-dimension SubEncoder without training: the full SubEncoder's outputs projected on their first
``dim`` principal components (Table 5's PCA row; not in Chen et al. 2023).

The paper reduces the output dimension by training a SubEncoder whose MLP ends in 64 units (§5.4, Table 5).
This row asks what the 64 dimensions cost in themselves: the trained full model, followed by the linear map
z -> V_dim (z - mu), where mu is the mean and V_dim the top ``dim`` eigenvectors of the covariance of the
model's outputs on the TRAINING propositions (``data/built/subencoder/train.jsonl``; no evaluation text),
accumulated batch by batch in float64 (``Moments``), so paper-scale training data fits in memory. The map is
appended to the head as one Linear (``SubEncoderConfig.projection_dim``), so the result is a SubEncoder folder
that the retrieval evaluation reads like any other. Cosine retrieval on centred, projected vectors is the
standard PCA reduction of an embedding index.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

import torch
from torch import nn

from multivec.subencoder.model import SubEncoder
from multivec.subencoder.training import collate, tokenize_rows


def _batches(model: SubEncoder, rows: Sequence[dict[str, Any]], batch_size: int) -> Iterator[torch.Tensor]:
    """The model's output vectors of the propositions of ``rows`` (training-data rows), batch by batch."""
    data = tokenize_rows(model, rows)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            for start in range(0, len(rows), batch_size):
                chunk = [r for r in range(start, min(start + batch_size, len(rows))) if data.masks[r]]
                if chunk:
                    yield model(*collate(model, data, chunk)[:4]).double().cpu()
    finally:
        model.train(was_training)


def training_outputs(model: SubEncoder, rows: Sequence[dict[str, Any]], batch_size: int = 32) -> torch.Tensor:
    """The model's output vector of every proposition of ``rows``, in row order (float32)."""
    parts = list(_batches(model, rows, batch_size))
    if not parts:
        raise ValueError("no training proposition to fit the projection on")
    return torch.cat(parts).float()


@dataclass
class Moments:
    """Count, sum and scatter (sum of outer products) of vectors, in float64: what PCA needs, in O(d^2)
    memory however many propositions the training data has (paper scale)."""

    count: int
    total: torch.Tensor
    scatter: torch.Tensor

    @classmethod
    def of(cls, parts: Iterable[torch.Tensor]) -> "Moments":
        count, total, scatter = 0, None, None
        for part in parts:
            part = part.double()
            count += part.shape[0]
            total = part.sum(0) if total is None else total + part.sum(0)
            scatter = part.T @ part if scatter is None else scatter + part.T @ part
        if total is None:
            raise ValueError("no training proposition to fit the projection on")
        return cls(count, total, scatter)


def principal_components(vectors: torch.Tensor | Moments, dim: int) -> tuple[torch.Tensor, torch.Tensor, float]:
    """(mean, the top ``dim`` principal directions as rows, the share of the variance they keep) of
    ``vectors`` (n, d), or of their ``Moments``. The sign of each direction is fixed (its largest-magnitude
    entry positive), so the map does not depend on the eigensolver's choice."""
    moments = vectors if isinstance(vectors, Moments) else Moments.of([vectors])
    n, d = moments.count, moments.total.shape[0]
    if not 1 <= dim <= min(n - 1, d):
        raise ValueError(f"a {dim}-d projection needs 1 <= dim <= min(vectors - 1, their {d} dimensions); "
                         f"{n} vectors")
    mean = moments.total / n
    covariance = (moments.scatter - n * torch.outer(mean, mean)) / (n - 1)
    values, vectors_ = torch.linalg.eigh(covariance)  # ascending
    directions = vectors_[:, -dim:].flip(1).T
    signs = torch.sign(directions.gather(1, directions.abs().argmax(1, keepdim=True)))
    kept = float(values[-dim:].sum() / values.sum())
    return mean.float(), (directions * signs).float(), kept


def with_pca_projection(model: SubEncoder, rows: Sequence[dict[str, Any]], dim: int,
                        batch_size: int = 32) -> tuple[SubEncoder, dict]:
    """``model`` (a trained full SubEncoder) followed by the projection on the first ``dim`` principal
    components of its outputs on ``rows``; returns the new model and what the fit measured (propositions,
    the share of variance the components keep)."""
    if model.config.head != "mlp" or model.config.projection_dim is not None:
        raise ValueError("the PCA projection applies to a trained SubEncoder without a projection")
    moments = Moments.of(_batches(model, rows, batch_size))
    mean, directions, kept = principal_components(moments, dim)
    projected = SubEncoder(dataclasses.replace(model.config, projection_dim=dim), model.encoder, model.tokenizer,
                           model.backbone_config)
    projected.head.to(model.device)
    projected.head[:3].load_state_dict(model.head.state_dict())
    last: nn.Linear = projected.head[3]
    with torch.no_grad():
        last.weight.copy_(directions)
        last.bias.copy_(-(directions @ mean))
    return projected.eval(), {"fit_propositions": moments.count, "dim": dim, "variance_kept": round(kept, 4)}
