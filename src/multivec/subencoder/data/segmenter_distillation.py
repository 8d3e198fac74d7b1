"""Distilling the LLM segmenter into a seq2seq model (Chen et al. 2023, App. A.2).

T5 (paper: t5-large) fine-tuned on the LLM's claims for the seed share of sentences: input the
sentence, target the numbered claims on one line (``segmentation.claims_as_target``); AdamW,
constant learning rate 1e-4, batch 128, 3 epochs. It plugs into the project's one training
engine (``multivec.training.engine``) as a ``TrainingTask``: checkpoints, resumption, DDP and
best-by-dev come from there. The output folder loads with ``from_pretrained`` (config,
tokenizer and ``model.safetensors``), which ``segmentation.Seq2SeqSegmenter`` reads.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Sequence

import torch

from multivec.training.engine import TrainConfig, Trainer, TrainingTask, seeded_generator


def seed_examples(rows: Sequence[dict]) -> list[tuple[str, str]]:
    """(sentence, target) from LLM seed rows ``{sentence, propositions: [{text}]}`` with >= 1 claim."""
    from multivec.subencoder.data.segmentation import claims_as_target

    return [(r["sentence"], claims_as_target([p["text"] for p in r["propositions"]]))
            for r in rows if r.get("propositions")]


class Seq2SeqSegmenterTask(TrainingTask):
    name = "seq2seq segmenter"
    throughput_unit = "target tokens"

    def __init__(self, base_model: str, train: list[tuple[str, str]], dev: list[tuple[str, str]], cfg: TrainConfig,
                 max_source_tokens: int = 128, max_target_tokens: int = 256):
        if not train:
            raise ValueError("no seed examples to distil the segmenter from (every LLM generation was dropped?)")
        self.base_model, self.train, self.dev, self.cfg = base_model, train, dev, cfg
        self.max_source_tokens, self.max_target_tokens = max_source_tokens, max_target_tokens

    def setup(self, out_dir: Path, runtime, resuming: bool) -> None:
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        from multivec.io.resources import resolve_model

        self.tokenizer = AutoTokenizer.from_pretrained(resolve_model(self.base_model))
        self.model = AutoModelForSeq2SeqLM.from_pretrained(resolve_model(self.base_model)).to(runtime.device)
        self.device = runtime.device

    def run_config(self) -> dict[str, Any]:
        return {"model": {"base_model": self.base_model, "max_source_tokens": self.max_source_tokens,
                          "max_target_tokens": self.max_target_tokens},
                "derived": {"train_examples": len(self.train), "dev_examples": len(self.dev)}}

    def epoch_batches(self, epoch: int) -> list[list[int]]:
        order = torch.randperm(len(self.train), generator=seeded_generator(self.cfg.seed, "epoch", epoch)).tolist()
        return [order[i:i + self.cfg.batch_size] for i in range(0, len(order), self.cfg.batch_size)]

    def _batch(self, examples: Sequence[tuple[str, str]]):
        batch = self.tokenizer([s for s, _ in examples], padding=True,
                               truncation=True, max_length=self.max_source_tokens, return_tensors="pt")
        labels = self.tokenizer([t for _, t in examples], padding=True, truncation=True,
                                max_length=self.max_target_tokens, return_tensors="pt")["input_ids"]
        labels[labels == self.tokenizer.pad_token_id] = -100
        return {"input_ids": batch["input_ids"].to(self.device), "attention_mask": batch["attention_mask"].to(self.device),
                "labels": labels.to(self.device)}

    def make_batch(self, spec: list[int], generator: torch.Generator):
        return self._batch([self.train[i] for i in spec])

    def loss(self, module, batch) -> tuple[torch.Tensor, int]:
        return module(**batch).loss, int((batch["labels"] != -100).sum())

    def evaluate(self, runtime) -> dict[str, float] | None:
        if not self.dev:
            return None
        self.model.eval()
        total, count = 0.0, 0
        with torch.no_grad(), runtime.autocast():
            for start in range(0, len(self.dev), self.cfg.batch_size):
                batch = self._batch(self.dev[start:start + self.cfg.batch_size])
                n = int((batch["labels"] != -100).sum())
                total += float(self.model(**batch).loss) * n
                count += n
        self.model.train()
        return {"dev_loss": total / max(count, 1)}

    def save_weights(self, path: Path) -> None:
        """The weights, one entry per tied group, as the same bytes in every process.

        T5 ties its embeddings (``shared``, both ``embed_tokens``, ``lm_head``). safetensors' ``save_model``
        records the dropped names as metadata in hash order, so identical weights were written as different
        bytes by another process (a resumed run copies the best weights a killed process wrote).
        Here the first name of each tied group in sorted order is kept and no alias metadata is written;
        ``load_weights`` and ``from_pretrained`` re-tie the others."""
        from safetensors.torch import save_file

        kept, seen = {}, set()
        for name, tensor in sorted(self.model.state_dict().items()):
            key = (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape))
            if key not in seen:
                seen.add(key)
                kept[name] = tensor.detach().contiguous().cpu()
        tmp = Path(path).with_name(Path(path).name + ".tmp")
        save_file(kept, str(tmp), metadata={"format": "pt"})
        os.replace(tmp, path)

    def load_weights(self, path: Path) -> None:
        from multivec.io.safe_loading import load_safetensors_into

        load_safetensors_into(self.model, path)

    def save_metadata(self, out_dir: Path, run_config: dict[str, Any]) -> None:
        self.model.config.save_pretrained(out_dir)
        self.tokenizer.save_pretrained(out_dir)


def train_segmenter(base_model: str, rows: Sequence[dict], out_dir: str | os.PathLike, *, lr: float, batch_size: int,
                    epochs: int, seed: int, dev_fraction: float = 0.02, **train_kwargs) -> dict[str, Any]:
    """App. A.2: constant lr (no decay), ``epochs`` passes over the seed examples; returns the summary."""
    examples = seed_examples(rows)
    n_dev = int(len(examples) * dev_fraction)
    order = torch.randperm(len(examples), generator=seeded_generator(seed, "segmenter-dev")).tolist()
    dev = [examples[i] for i in order[:n_dev]]
    train = [examples[i] for i in order[n_dev:]]
    steps = max(1, epochs * math.ceil(len(train) / batch_size))
    cfg = TrainConfig(max_steps=steps, batch_size=batch_size, lr=lr, schedule="constant", seed=seed, warmup_steps=0,
                      **train_kwargs)
    task = Seq2SeqSegmenterTask(base_model, train, dev, cfg)
    return Trainer(task, cfg, out_dir).fit()
