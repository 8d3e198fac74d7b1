"""Training the sub-sentence encoder (Chen et al. 2023, §3.2 and App. B) as a plug-in of the project's one
training engine (``multivec.training``): supervised contrastive loss over every proposition of the batch
(``multivec.subencoder.losses.supcon``; all-gathered across ranks under DDP), AdamW with linear decay, the best
checkpoint by validation loss, exact resumption.

Input: the data builder's JSONL (``data/built/subencoder/{train,dev}.jsonl``), one row per sentence:
``{"id", "sentence", "pair_id", "propositions": [{"text", "char_spans": [[start, end], ...], "label"}]}``.
Propositions sharing a label within a pair are positives. Labels are re-numbered per batch by
(pair_id, label), so a label never links propositions of different pairs. A batch holds whole pairs
(``batch_size`` sentences, rounded down to whole pairs, at least one pair); the batch order is a pure
function of (seed, epoch). Propositions whose subwords are all truncated away (``max_tokens``) are
dropped and counted.

Output folder (``SubEncoder.load`` reads it): ``model.safetensors`` (best dev loss), ``config.json``,
``backbone/``, ``metrics.csv``, ``training_summary.json``, ``checkpoint/``.
"""

from __future__ import annotations

import logging
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import torch

from multivec.io import MalformedInputError, read_jsonl
from multivec.subencoder.losses.supcon import distributed_supcon_loss, supcon_loss
from multivec.subencoder.configuration import SubEncoderConfig
from multivec.subencoder.model import SubEncoder
from multivec.training.distributed import Runtime
from multivec.training.engine import TrainConfig, TrainingTask, seeded_generator, train_task

log = logging.getLogger(__name__)

DEFAULT_TEMPERATURE = 0.1  # the authors' code (SupConLoss default); the paper's text says 0.01


def read_sentences(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Rows of the shared training format, checked; a bad row names the file, line and key."""
    rows = read_jsonl(path)
    if not rows:
        raise MalformedInputError(path, None, "no rows")
    for number, row in enumerate(rows, start=1):
        for key, kind in (("id", str), ("sentence", str), ("pair_id", str), ("propositions", list)):
            if not isinstance(row.get(key), kind):
                raise MalformedInputError(path, number, f"key {key!r} missing or not a {kind.__name__}")
        for j, prop in enumerate(row["propositions"]):
            spans = prop.get("char_spans") if isinstance(prop, dict) else None
            if not isinstance(spans, list) or not spans or not isinstance(prop.get("label"), int):
                raise MalformedInputError(path, number, f"proposition {j}: needs non-empty 'char_spans' and an "
                                          "integer 'label'")
            for span in spans:
                if (not isinstance(span, list) or len(span) != 2 or not 0 <= span[0] < span[1]
                        or span[1] > len(row["sentence"])):
                    raise MalformedInputError(path, number, f"proposition {j}: char span {span!r} is not inside "
                                              f"the sentence ({len(row['sentence'])} characters)")
    return rows


@dataclass
class TokenizedSentences:
    input_ids: list[list[int]]
    masks: list[list[list[int]]]  # per sentence, per kept proposition
    labels: list[list[tuple[str, int]]]  # (pair_id, label) per kept proposition
    pairs: list[list[int]]  # row indices grouped by pair_id (file order), sentences with propositions only
    dropped_propositions: int


def tokenize_rows(model: SubEncoder, rows: Sequence[dict[str, Any]]) -> TokenizedSentences:
    encoded, masks = model.span_masks([r["sentence"] for r in rows],
                                      [[p["char_spans"] for p in r["propositions"]] for r in rows])
    kept_masks, labels, dropped = [], [], 0
    for row, row_masks in zip(rows, masks):
        keep = [j for j, m in enumerate(row_masks) if any(m)]
        dropped += len(row_masks) - len(keep)
        kept_masks.append([row_masks[j] for j in keep])
        labels.append([(row["pair_id"], row["propositions"][j]["label"]) for j in keep])
    groups: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        if kept_masks[i]:  # a sentence left without propositions takes no part in any batch
            groups[row["pair_id"]].append(i)
    if not groups:
        raise ValueError("no sentence has a proposition left after tokenisation (all truncated by max_tokens?)")
    return TokenizedSentences(encoded["input_ids"], kept_masks, labels, list(groups.values()), dropped)


def pair_batches(pairs: Sequence[Sequence[int]], batch_size: int, seed: int, epoch: int,
                 shuffle: bool = True) -> list[list[int]]:
    """Whole pairs per batch, about ``batch_size`` sentences each; the order is a pure function of (seed, epoch)."""
    order = torch.randperm(len(pairs), generator=seeded_generator(seed, "epoch", epoch)).tolist() if shuffle \
        else list(range(len(pairs)))
    batches, current = [], []
    for p in order:
        if current and len(current) + len(pairs[p]) > batch_size:
            batches.append(current)
            current = []
        current = current + list(pairs[p])
    if current:
        batches.append(current)
    return batches


def collate(model: SubEncoder, data: TokenizedSentences, rows: Sequence[int]):
    """(input_ids, attention_mask, prop_masks, prop_sentence, labels) on the model's device."""
    device = model.device
    rows = [r for r in rows if data.masks[r]]
    if not rows:
        raise ValueError("a batch without a single proposition")
    width = max(len(data.input_ids[r]) for r in rows)
    pad_id = model.tokenizer.pad_token_id or 0
    input_ids = torch.tensor([data.input_ids[r] + [pad_id] * (width - len(data.input_ids[r])) for r in rows])
    attention = torch.tensor([[1] * len(data.input_ids[r]) + [0] * (width - len(data.input_ids[r])) for r in rows])
    prop_masks, prop_sentence, label_keys = [], [], []
    for k, r in enumerate(rows):
        for mask, label in zip(data.masks[r], data.labels[r]):
            prop_masks.append(mask + [0] * (width - len(mask)))
            prop_sentence.append(k)
            label_keys.append(label)
    numbering = {key: i for i, key in enumerate(dict.fromkeys(label_keys))}
    labels = torch.tensor([numbering[key] for key in label_keys])
    return tuple(t.to(device) for t in (input_ids, attention, torch.tensor(prop_masks), torch.tensor(prop_sentence),
                                         labels))


class SubEncoderTask(TrainingTask):
    """The SubEncoder for the training engine."""

    name = "subencoder"
    dev_metrics = ("dev_loss",)
    selection_metric = "dev_loss"
    selection_mode = "min"
    throughput_unit = "propositions"

    def __init__(self, model_config: SubEncoderConfig, cfg: TrainConfig, train_rows, dev_rows,
                 temperature: float = DEFAULT_TEMPERATURE):
        if model_config.head != "mlp":
            raise ValueError("subencoder.model.head must be 'mlp' to train a SubEncoder")
        if model_config.projection_dim is not None:
            raise ValueError("subencoder.model.projection_dim is fitted after training (pca_projection.py), "
                             "not trained: train the full SubEncoder, then project it")
        if temperature <= 0:
            raise ValueError(f"subencoder.train.temperature={temperature}: must be > 0")
        self.model_config, self.cfg, self.temperature = model_config, cfg, temperature
        self.train_rows, self.dev_rows = train_rows, dev_rows

    def setup(self, out_dir: Path, runtime: Runtime, resuming: bool) -> None:
        self.model = SubEncoder.from_backbone(self.model_config)
        self.train_data = tokenize_rows(self.model, self.train_rows)
        self.dev_data = tokenize_rows(self.model, self.dev_rows) if self.dev_rows else None
        self.derived = {"hidden_size": self.model.hidden_size, "output_dim": self.model.output_dim,
                        "train_sentences": len(self.train_rows), "train_pairs": len(self.train_data.pairs),
                        "train_propositions": sum(map(len, self.train_data.masks)),
                        "train_propositions_dropped_by_truncation": self.train_data.dropped_propositions,
                        "dev_sentences": len(self.dev_rows) if self.dev_rows else 0}

    def run_config(self) -> dict[str, Any]:
        return {"model": self.model_config.to_dict(), "loss": {"name": "SupConLoss (pytorch-metric-learning)",
                                                              "temperature": self.temperature},
                "derived": self.derived}

    def epoch_batches(self, epoch: int) -> list[list[int]]:
        return pair_batches(self.train_data.pairs, self.cfg.batch_size, self.cfg.seed, epoch)

    def make_batch(self, spec: list[int], generator: torch.Generator):
        return collate(self.model, self.train_data, spec)

    def loss(self, module, batch) -> tuple[torch.Tensor, int]:
        embeddings = module(*batch[:4])
        return distributed_supcon_loss(embeddings, batch[4], self.temperature), int(batch[4].shape[0])

    def evaluate(self, runtime: Runtime) -> dict[str, float] | None:
        """Mean SupCon loss over fixed dev batches (same batches every time), weighted by propositions."""
        if self.dev_data is None:
            return None
        model = self.model
        was_training = model.training
        model.eval()
        total, count = 0.0, 0
        batch_size = self.cfg.dev_batch_size or self.cfg.batch_size
        with torch.no_grad():
            for rows in pair_batches(self.dev_data.pairs, batch_size, self.cfg.seed, 0, shuffle=False):
                if not any(self.dev_data.masks[r] for r in rows):
                    continue
                batch = collate(model, self.dev_data, rows)
                with runtime.autocast():
                    loss = supcon_loss(model(*batch[:4]), batch[4], self.temperature)
                total += float(loss) * int(batch[4].shape[0])
                count += int(batch[4].shape[0])
        model.train(was_training)
        return {"dev_loss": total / max(count, 1)}

    def parameter_groups(self, cfg: TrainConfig) -> list[dict[str, Any]]:
        """The pretrained encoder at ``lr``; the MLP head (trained from scratch) at ``lr_scratch`` (None: lr)."""
        encoder = [(n, p) for n, p in self.model.named_parameters() if not n.startswith("head.")]
        head = [(n, p) for n, p in self.model.named_parameters() if n.startswith("head.")]
        return [{"params": encoder, "lr": cfg.lr}, {"params": head, "lr": cfg.lr_scratch or cfg.lr}]


def train(model_config: SubEncoderConfig, train_config: TrainConfig, train_path: str | os.PathLike,
          dev_path: str | os.PathLike | None, out_dir: str | os.PathLike, *, temperature: float = DEFAULT_TEMPERATURE,
          _interrupt_after: int | None = None) -> dict[str, Any]:
    """Train (or resume) a SubEncoder into ``out_dir``; returns the engine's training summary."""
    task = SubEncoderTask(model_config, train_config, read_sentences(train_path),
                          read_sentences(dev_path) if dev_path is not None else None, temperature)
    return train_task(task, train_config, out_dir, _interrupt_after=_interrupt_after)
