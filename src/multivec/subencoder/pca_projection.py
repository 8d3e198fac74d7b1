"""A reduced-dimension SubEncoder without training: the full SubEncoder's outputs projected on their first
``dim`` principal components (Table 5's PCA row; not in Chen et al. 2023).

The paper reduces the output dimension by training a SubEncoder whose MLP ends in 64 units (§5.4, Table 5).
This row asks what the 64 dimensions cost in themselves: the trained full model, followed by the linear map
z -> V_dim (z - mu), where mu is the mean and V_dim the top ``dim`` right singular vectors of the model's
outputs on the TRAINING propositions (``data/built/subencoder/train.jsonl``; no evaluation text). The map is
appended to the head as one Linear (``SubEncoderConfig.projection_dim``), so the result is a SubEncoder folder
that the retrieval evaluation reads like any other. Cosine retrieval on centred, projected vectors is the
standard PCA reduction of an embedding index.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import torch
from torch import nn

from multivec.subencoder.model import SubEncoder
from multivec.subencoder.training import collate, tokenize_rows


def training_outputs(model: SubEncoder, rows: Sequence[dict[str, Any]], batch_size: int = 32) -> torch.Tensor:
    """The model's output vector of every proposition of ``rows`` (training-data rows), in row order."""
    data = tokenize_rows(model, rows)
    was_training = model.training
    model.eval()
    out = []
    with torch.no_grad():
        for start in range(0, len(rows), batch_size):
            batch = collate(model, data, list(range(start, min(start + batch_size, len(rows)))))
            if batch[2].numel():
                out.append(model(*batch[:4]).float().cpu())
    model.train(was_training)
    if not out:
        raise ValueError("no training proposition to fit the projection on")
    return torch.cat(out)


def principal_components(vectors: torch.Tensor, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(mean, the top ``dim`` principal directions as rows) of ``vectors`` (n, d); the sign of each direction
    is fixed (its largest-magnitude entry positive), so the map does not depend on the SVD routine's choice."""
    n, d = vectors.shape
    if not 1 <= dim <= min(n - 1, d):
        raise ValueError(f"a {dim}-d projection needs 1 <= dim <= min(vectors - 1, their {d} dimensions); "
                         f"{n} vectors")
    mean = vectors.double().mean(0)
    _, _, vh = torch.linalg.svd(vectors.double() - mean, full_matrices=False)
    directions = vh[:dim]
    signs = torch.sign(directions.gather(1, directions.abs().argmax(1, keepdim=True)))
    return mean.float(), (directions * signs).float()


def with_pca_projection(model: SubEncoder, rows: Sequence[dict[str, Any]], dim: int) -> tuple[SubEncoder, dict]:
    """``model`` (a trained full SubEncoder) followed by the projection on the first ``dim`` principal
    components of its outputs on ``rows``; returns the new model and what the fit measured (propositions,
    the share of variance the components keep)."""
    if model.config.head != "mlp" or model.config.projection_dim is not None:
        raise ValueError("the PCA projection applies to a trained SubEncoder without a projection")
    vectors = training_outputs(model, rows)
    mean, directions = principal_components(vectors, dim)
    centred = vectors - mean
    kept = float((centred @ directions.T).pow(2).sum() / centred.pow(2).sum())
    projected = SubEncoder(dataclasses.replace(model.config, projection_dim=dim), model.encoder, model.tokenizer,
                           model.backbone_config)
    projected.head[:3].load_state_dict(model.head.state_dict())
    last: nn.Linear = projected.head[3]
    with torch.no_grad():
        last.weight.copy_(directions)
        last.bias.copy_(-(directions @ mean))
    return projected.eval(), {"fit_propositions": int(vectors.shape[0]), "dim": dim,
                              "variance_kept": round(kept, 4)}
