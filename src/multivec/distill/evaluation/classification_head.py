"""The distillation thesis's classification head on frozen document embeddings (Burian 2023, §5:
evaluation tasks such as IMDB §5.1.1; the settings are those of the authors' evaluation config,
``dburian/transformer_document_embedding`` ``experiments/evaluate_final.yaml``):

    Linear(d -> 50) -> ReLU -> Dropout(0.5) -> Linear(50 -> classes)

trained with cross-entropy with label smoothing 0.1 (``label_smoothed_cross_entropy``:
(1 - eps) * NLL(y) + eps * mean over classes of -log p_c, torch's definition), 10 epochs of
shuffled batches of 32, AdamW lr 1e-4 with weight decay 0.1, a cosine schedule without warm-up
(decaying to 0 at the last step), gradient clipping at 1.0; the score is test accuracy.

The learning-rate schedule and the decayed/undecayed parameter split are the training engine's
(``multivec.training.engine.lr_factor`` / ``make_optimizer``: no decay on biases); batch order is a
pure function of (seed, epoch) (``seeded_generator``), so a rerun on CPU gives the same accuracy.
The embeddings stay frozen: this module never sees the encoder, only an [N, d] array.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from torch import nn


@dataclass(frozen=True)
class HeadConfig:
    hidden: int = 50
    dropout: float = 0.5
    label_smoothing: float = 0.1
    epochs: int = 10
    batch_size: int = 32
    lr: float = 1e-4
    weight_decay: float = 0.1
    schedule: str = "cosine"
    warmup_steps: int = 0
    grad_clip: float | None = 1.0
    seed: int = 0
    device: str = "auto"
    eval_batch_size: int = 1024

    def __post_init__(self):
        for key in ("hidden", "epochs", "batch_size", "eval_batch_size"):
            if getattr(self, key) < 1:
                raise ValueError(f"classification head: {key}={getattr(self, key)!r} must be >= 1")
        if not 0 <= self.dropout < 1 or not 0 <= self.label_smoothing < 1:
            raise ValueError(f"classification head: dropout={self.dropout} and label_smoothing="
                             f"{self.label_smoothing} must be in [0, 1)")

    @classmethod
    def from_dict(cls, data: dict, **overrides) -> "HeadConfig":
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"classification head config: unknown key(s) {sorted(unknown)}; "
                             f"known: {', '.join(cls.__dataclass_fields__)}")
        return cls(**{**data, **overrides})

    def to_dict(self) -> dict:
        return asdict(self)


class ClassificationHead(nn.Module):
    def __init__(self, dimension: int, classes: int, hidden: int = 50, dropout: float = 0.5):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(dimension, hidden), nn.ReLU(), nn.Dropout(dropout),
                                    nn.Linear(hidden, classes))

    def forward(self, embeddings: torch.Tensor) -> torch.Tensor:
        return self.layers(embeddings)


def label_smoothed_cross_entropy(logits: torch.Tensor, targets: torch.Tensor, smoothing: float) -> torch.Tensor:
    """Mean over the batch of (1 - smoothing) * -log p_y + smoothing * mean_c(-log p_c).

    The definition of ``torch.nn.functional.cross_entropy(..., label_smoothing=smoothing)``, which is not
    used because it averages the two terms over the batch before mixing them: its loss and gradients
    differ from these by float rounding (loss up to ~1e-6), which would change the trained heads."""
    log_probs = torch.log_softmax(logits, dim=-1)
    nll = -log_probs.gather(1, targets.unsqueeze(1)).squeeze(1)
    uniform = -log_probs.mean(dim=-1)
    return ((1.0 - smoothing) * nll + smoothing * uniform).mean()


def _check(vectors: np.ndarray, labels: np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray]:
    vectors, labels = np.asarray(vectors, np.float32), np.asarray(labels)
    if vectors.ndim != 2 or labels.ndim != 1 or len(vectors) != len(labels) or not len(labels):
        raise ValueError(f"{what}: need embeddings [N, d] and N labels, got {vectors.shape} and {labels.shape}")
    if not np.issubdtype(labels.dtype, np.integer) or labels.min() < 0:
        raise ValueError(f"{what}: labels must be integers >= 0")
    return vectors, labels.astype(np.int64)


@dataclass
class HeadResult:
    accuracy: float
    train_accuracy: float
    final_train_loss: float
    steps: int
    seconds: float
    dimension: int
    classes: int
    n_train: int
    n_test: int
    test_predictions: np.ndarray | None = field(default=None, repr=False, compare=False)  # per test row

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "test_predictions"}


def train_head(vectors: np.ndarray, labels: np.ndarray, cfg: HeadConfig, classes: int | None = None,
               device: torch.device | None = None) -> tuple[ClassificationHead, list[float]]:
    """The trained head (eval mode) and the mean training loss of each epoch."""
    from multivec.training.distributed import resolve_device
    from multivec.training.engine import TrainConfig, lr_factor, make_optimizer, seeded_generator

    vectors, labels = _check(vectors, labels, "classification head training set")
    classes = classes or int(labels.max()) + 1
    device = device or resolve_device(cfg.device)
    torch.manual_seed(cfg.seed)
    head = ClassificationHead(vectors.shape[1], classes, cfg.hidden, cfg.dropout).to(device)
    per_epoch = math.ceil(len(labels) / cfg.batch_size)
    total = cfg.epochs * per_epoch
    optimizer = make_optimizer([{"params": list(head.named_parameters()), "lr": cfg.lr}],
                               TrainConfig(max_steps=total, weight_decay=cfg.weight_decay))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: lr_factor(step, schedule=cfg.schedule, warmup=cfg.warmup_steps, total=total))
    x, y = torch.from_numpy(vectors).to(device), torch.from_numpy(labels).to(device)
    history = []
    head.train()
    for epoch in range(cfg.epochs):
        order = torch.randperm(len(labels), generator=seeded_generator(cfg.seed, "head_epoch", epoch)).to(device)
        losses = []
        for start in range(0, len(labels), cfg.batch_size):
            batch = order[start:start + cfg.batch_size]
            loss = label_smoothed_cross_entropy(head(x[batch]), y[batch], cfg.label_smoothing)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if cfg.grad_clip:
                nn.utils.clip_grad_norm_(head.parameters(), cfg.grad_clip)
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
        history.append(float(np.mean(losses)))
    head.eval()
    return head, history


@torch.no_grad()
def predict(head: ClassificationHead, vectors: np.ndarray, batch_size: int = 1024) -> np.ndarray:
    device = next(head.parameters()).device
    head.eval()
    out = [head(torch.from_numpy(np.asarray(vectors[i:i + batch_size], np.float32)).to(device)).argmax(-1).cpu()
           for i in range(0, len(vectors), batch_size)]
    return torch.cat(out).numpy()


def accuracy(head: ClassificationHead, vectors: np.ndarray, labels: np.ndarray, batch_size: int = 1024) -> float:
    vectors, labels = _check(vectors, labels, "classification head evaluation set")
    return float((predict(head, vectors, batch_size) == labels).mean())


def evaluate_head(train_vectors: np.ndarray, train_labels: np.ndarray, test_vectors: np.ndarray,
                  test_labels: np.ndarray, cfg: HeadConfig) -> HeadResult:
    """Train the head on the training embeddings, score accuracy on the test embeddings."""
    train_vectors, train_labels = _check(train_vectors, train_labels, "classification head training set")
    test_vectors, test_labels = _check(test_vectors, test_labels, "classification head test set")
    if train_vectors.shape[1] != test_vectors.shape[1]:
        raise ValueError(f"classification head: training embeddings are {train_vectors.shape[1]}-d, "
                         f"test embeddings {test_vectors.shape[1]}-d")
    classes = int(max(train_labels.max(), test_labels.max())) + 1
    start = time.time()
    head, history = train_head(train_vectors, train_labels, cfg, classes)
    predictions = predict(head, test_vectors, cfg.eval_batch_size)
    return HeadResult(accuracy=float((predictions == test_labels).mean()),
                      train_accuracy=accuracy(head, train_vectors, train_labels, cfg.eval_batch_size),
                      final_train_loss=history[-1], steps=cfg.epochs * math.ceil(len(train_labels) / cfg.batch_size),
                      seconds=time.time() - start, dimension=int(train_vectors.shape[1]), classes=classes,
                      n_train=len(train_labels), n_test=len(test_labels), test_predictions=predictions)
