"""Training the NUGGET encoder-decoder (paper §4: AE and MT objectives, token cross-entropy, AdamW 5e-5)
as a plug-in of the shared engine (``multivec.training``).

``train(model_config, train_config, train_path, dev_path, out_dir)`` trains on JSONL rows
``{"id", "source", "target"}`` and writes into ``out_dir``:
``model.safetensors`` (best dev loss), ``config.json``, ``backbone/``, ``source_tokenizer/``,
``target_tokenizer/``, ``metrics.csv``, ``training_summary.json`` and ``checkpoint/`` (last state).

This module holds only NUGGET's side: reading pairs, tokenising, length-sorted batches (a pure function
of (seed, epoch)), TSDAE deletion noise (drawn from the engine's (seed, step) generator), the token
cross-entropy loss, the dev loss and the pretrained/from-scratch parameter groups. Checkpoints,
resumption, DDP, mixed precision and schedules are the engine's.

Frozen-bottom cache (§3.3 "stabilized training"): the embeddings and layers 1..l are frozen and run in
eval mode, so without deletion noise a document's layer-l states never change during training.
``BottomCache`` keeps them (float32, per document, each computed alone when first seen, so a resumed run
gets the same bits) and later epochs and dev evaluations run only the trainable top. It is used only when
it cannot change the result beyond float rounding (``bottom_cache_applies``): no noise, the bottom frozen at
least up to the scorer layer.

Shared starting point: with ``init_from`` (a saved ``bottleneck: tokens`` model, the r = 1 seq2seq
trained once per objective) the encoder and decoder start from that model's weights and its target
vocabulary; what it loaded trains at ``lr`` (pretrained), the parts it lacks at ``lr_scratch``.
Sanity reference: ``unigram_nats`` is the entropy of the dev targets' unigram distribution (the tokens the
loss counts), stored in ``config.json`` (``derived``) so that a table can check that a model's best dev
loss is below it (``multivec.nugget.gates``).
"""

from __future__ import annotations

import logging
import math
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import torch

from multivec.io import MalformedInputError, read_jsonl
from multivec.nugget.configuration import NuggetConfig
from multivec.nugget.modeling import NuggetModel
from multivec.nugget.processing import TARGET_TOKENIZER_DIR
from multivec.nugget.target_tokenizer import TargetTokenizer
from multivec.training.batching import epoch_batches, pad_sequences
from multivec.training.distributed import Runtime
from multivec.training.engine import TrainConfig, TrainingTask, seeded_generator, train_task

log = logging.getLogger(__name__)

__all__ = ["NuggetTask", "TrainConfig", "train"]  # TrainConfig lives in multivec.training.engine



# -- data ------------------------------------------------------------------------------------------
def read_pairs(path: str | os.PathLike) -> list[dict[str, str]]:
    rows = read_jsonl(path)
    for number, row in enumerate(rows, start=1):
        for key in ("id", "source", "target"):
            if not isinstance(row.get(key), str):
                raise MalformedInputError(path, None, f"row {number}: field {key!r} missing or not a string")
        if not row["source"].strip() or not row["target"].strip():
            raise MalformedInputError(path, None, f"row {number} (id {row['id']!r}): empty source or target")
    if not rows:
        raise MalformedInputError(path, None, "no rows")
    return rows


@dataclass
class TokenizedPairs:
    sources: list[list[int]]
    targets: list[list[int]]
    # Per source, 1 at sentence-final tokens; only for the sentence-boundary selector (Table 4).
    sentence_ends: list[list[int]] | None = None


def needs_sentence_ends(config: NuggetConfig) -> bool:
    return config.bottleneck == "nuggets" and config.selector == "sentence_boundary"


def tokenize_pairs(model: NuggetModel, rows: Sequence[dict[str, Any]]) -> TokenizedPairs:
    cfg = model.config
    texts = [r["source"] for r in rows]
    sentence_ends = None
    if needs_sentence_ends(cfg):
        missing = [r["id"] for r in rows if not isinstance(r.get("source_sentence_ends"), list)]
        if missing:
            raise ValueError(f"selector 'sentence_boundary' needs the corpus rows' 'source_sentence_ends' "
                             f"(missing in {len(missing)} rows, e.g. id {missing[0]!r}): rebuild the corpus")
        sentence_ends = model.processor.sentence_end_masks(texts, [r["source_sentence_ends"] for r in rows],
                                                 cfg.max_source_tokens)
    return TokenizedPairs(model.processor.tokenize_sources(texts, cfg.max_source_tokens),
                          model.processor.target_tokenizer.encode([r["target"] for r in rows], cfg.max_target_tokens),
                          sentence_ends)


def delete_tokens(ids: Sequence[int], probability: float, special_ids: set[int],
                  generator: torch.Generator) -> list[int]:
    """Deletion noise (TSDAE): drop each non-special token with ``probability``, keeping at least one."""
    content = [i for i, t in enumerate(ids) if t not in special_ids]
    if probability <= 0 or not content:
        return list(ids)
    draws = torch.rand(len(content), generator=generator).tolist()
    dropped = {content[j] for j, u in enumerate(draws) if u < probability}
    if len(dropped) == len(content):
        dropped.discard(content[int(torch.randint(len(content), (1,), generator=generator))])
    return [t for i, t in enumerate(ids) if i not in dropped]


def bottom_cache_applies(config: NuggetConfig) -> bool:
    """True when a document's layer-l states are the same at every step: nothing below the scorer trains
    and no deletion noise changes the input."""
    return config.frozen_bottom >= config.scorer_layer and config.noise_deletion == 0.0


class BottomCache:
    """Layer-l states of the documents seen so far (n_i × d float32 each, in CPU memory), keyed by row index.
    At most ``max_megabytes`` are stored; the other documents are computed every time.

    Exact resumption: the states a step trains on must not depend on the run's history, since a
    resumed run starts with an empty cache. They used to be computed together with whichever documents of
    the batch were missing, so a document first seen after a resumption got other batch shapes and other
    float rounding (measured: 9 of 60 documents differed by up to 4.8e-7, and after 30 steps 87 of 134
    weight tensors by up to 6.9e-6). Now a stored document is computed alone (its own length, no padding):
    a pure function of the document. Which documents are stored is fixed in advance by ``plan`` (shortest
    first within the bound), so the documents that are never stored, computed together in one call, are a
    pure function of the batch. Without a plan every document is stored while the bound allows, and one
    past it is computed alone too."""

    def __init__(self, max_megabytes: float = 4096.0):
        self.states: dict[int, torch.Tensor] = {}
        self.hits = self.misses = 0
        self.max_bytes, self.bytes = max_megabytes * 2 ** 20, 0
        self.planned: frozenset[int] | None = None  # documents that ``plan`` chose to store; None: no plan

    def plan(self, lengths: Sequence[int], hidden_size: int) -> None:
        """Choose the stored documents from the corpus alone: shortest first (ties by index) while their
        float32 states fit in ``max_megabytes``."""
        chosen, total = [], 0
        for i in sorted(range(len(lengths)), key=lambda i: (lengths[i], i)):
            size = lengths[i] * hidden_size * 4
            if total + size > self.max_bytes:
                break
            chosen.append(i)
            total += size
        self.planned = frozenset(chosen)

    def batch(self, model: NuggetModel, rows: Sequence[int], input_ids: torch.Tensor,
              attention_mask: torch.Tensor) -> torch.Tensor:
        """B × width × d states of a right-padded batch (see the class docstring for how each is computed)."""
        lengths = [int(n) for n in attention_mask.sum(1).tolist()]
        out = torch.zeros(len(rows), input_ids.shape[1], model.encoder.hidden_size, dtype=torch.float32)
        unstored = []  # never stored under the plan: computed together below
        with torch.no_grad():
            for j, i in enumerate(rows):
                doc = self.states.get(i)
                if doc is not None:
                    self.hits += 1
                elif self.planned is not None and i not in self.planned:
                    unstored.append(j)
                    continue
                else:
                    self.misses += 1
                    n = lengths[j]
                    doc = model.encode_bottom(input_ids[j:j + 1, :n], attention_mask[j:j + 1, :n])[0]
                    doc = doc.float().cpu().clone()
                    if self.planned is not None or self.bytes + doc.numel() * 4 <= self.max_bytes:
                        self.states[i] = doc
                        self.bytes += doc.numel() * 4
                out[j, :len(doc)] = doc
            if unstored:
                self.misses += len(unstored)
                width = max(lengths[j] for j in unstored)
                computed = model.encode_bottom(input_ids[unstored, :width], attention_mask[unstored, :width])
                for slot, j in enumerate(unstored):
                    out[j, :lengths[j]] = computed[slot, :lengths[j]].float().cpu()
        return out.to(input_ids.device)

    def megabytes(self) -> float:
        return self.bytes / 2 ** 20


def make_batch(model: NuggetModel, data: TokenizedPairs, rows: Sequence[int], noise_generator: torch.Generator | None,
               cache: BottomCache | None = None):
    sources = [data.sources[i] for i in rows]
    if noise_generator is not None and model.config.noise_deletion > 0:
        special = set(model.processor.source_tokenizer.all_special_ids)
        sources = [delete_tokens(s, model.config.noise_deletion, special, noise_generator) for s in sources]
    input_ids, attention_mask = model.processor.collate_sources(sources, model.device)
    decoder_input_ids, labels = model.processor.target_batch([data.targets[i] for i in rows], model.device)
    sentence_end_mask = None
    if data.sentence_ends is not None:
        # Padded with 0 (not the pad id): padding is never a sentence end. No deletion noise here (the
        # config refuses it with this selector), so the flags stay aligned with the ids.
        sentence_end_mask, _ = pad_sequences([data.sentence_ends[i] for i in rows], 0, model.device)
    if cache is not None:
        if model.config.noise_deletion > 0 and noise_generator is not None:
            raise ValueError("the frozen-bottom cache cannot be used with deletion noise (inputs change every step)")
        bottom = cache.batch(model, rows, input_ids, attention_mask)
        return input_ids, attention_mask, decoder_input_ids, labels, sentence_end_mask, bottom
    if sentence_end_mask is None:
        return input_ids, attention_mask, decoder_input_ids, labels
    return input_ids, attention_mask, decoder_input_ids, labels, sentence_end_mask


def label_tokens(model: NuggetModel, data: TokenizedPairs) -> list[int]:
    """The target tokens the loss counts: every token after the forced prefix, eos included."""
    skip = len(model.processor.target_tokenizer.prefix_ids)
    return [t for ids in data.targets for t in ids[skip:]]


def unigram_nats(model: NuggetModel, dev: TokenizedPairs) -> float:
    """Entropy (nats per label token) of the dev targets' own unigram distribution: the dev loss of the best
    unigram model of those targets, fitted on them (a lower bound for any unigram model, so a stricter
    reference than one fitted on the training targets)."""
    counts = Counter(label_tokens(model, dev))
    total = sum(counts.values())
    if not total:
        raise ValueError("no dev target tokens: cannot compute the unigram reference")
    return -sum(c / total * math.log(c / total) for c in counts.values())


def unigram_output_bias(model: NuggetModel, train: TokenizedPairs) -> torch.Tensor:
    """log of the add-one smoothed unigram frequencies of the training label tokens (``output_bias_init:
    unigram``): with it, the untrained decoder's output is a unigram model of the targets."""
    counts = torch.ones(model.processor.target_tokenizer.vocab_size, dtype=torch.float64)
    for token, count in Counter(label_tokens(model, train)).items():
        counts[token] += count
    return (counts / counts.sum()).log().float().unsqueeze(0)


def parameter_groups(model: NuggetModel, cfg: TrainConfig, loaded: set[str] = frozenset()) -> list[dict[str, Any]]:
    """Pretrained parameters at ``lr``; those learning a new job (scorer, e^n/e^o, W^V, the demo decoder) at
    ``lr_scratch``; ``loaded``: names ``NuggetModel.initialize_from`` loaded (pretrained, at ``lr``)."""
    scratch_names = model.new_parameter_names() - set(loaded)
    pretrained, scratch = [], []
    for name, param in model.named_parameters():
        if param.requires_grad:
            (scratch if name in scratch_names else pretrained).append((name, param))
    return [{"params": group, "lr": lr}
            for group, lr in ((pretrained, cfg.lr), (scratch, cfg.lr_scratch or cfg.lr)) if group]


def dev_loss(model: NuggetModel, data: TokenizedPairs, batch_size: int, seed: int, autocast,
             cache: BottomCache | None = None) -> float:
    """Token-weighted dev loss. Deletion noise (if any) is drawn from a fixed seed: same noise every time."""
    was_training = model.training
    model.eval()
    noise = seeded_generator(seed, "dev")
    order = sorted(range(len(data.sources)), key=lambda i: len(data.sources[i]))
    total, count = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            batch = make_batch(model, data, order[start:start + batch_size], noise, cache)
            tokens = int((batch[3] != -100).sum())
            with autocast():
                total += float(model(*batch)) * tokens
            count += tokens
    model.train(was_training)
    return total / max(count, 1)


class NuggetTask(TrainingTask):
    """NUGGET / TSDAE for the training engine; the model is built in ``setup``."""

    dev_metrics = ("dev_loss",)
    selection_metric = "dev_loss"
    selection_mode = "min"
    throughput_unit = "tokens"  # real (non-padding, post-noise) source tokens

    def __init__(self, model_config: NuggetConfig, cfg: TrainConfig, train_rows: list[dict[str, str]],
                 dev_rows: list[dict[str, str]] | None, cache_bottom: bool = True,
                 init_from: str | os.PathLike | None = None):
        self.model_config, self.cfg = model_config, cfg
        self.init_from = None if init_from is None else str(init_from)
        self.loaded: set[str] = set()
        # Frozen-bottom cache (module docstring): on whenever it cannot change the result.
        applies = cache_bottom and bottom_cache_applies(model_config)
        self.train_cache = BottomCache() if applies else None
        self.dev_cache = BottomCache() if applies else None
        self.train_rows, self.dev_rows = train_rows, dev_rows
        self.name = {"nuggets": "nugget", "mean": "tsdae", "tokens": "seq2seq"}[model_config.bottleneck]

    def setup(self, out_dir: Path, runtime: Runtime, resuming: bool) -> None:
        # Target vocabulary: trained once on the training targets, reloaded on resumption and by other ranks.
        target_tokenizer = None
        if self.model_config.target_tokenizer == "bpe" and self.init_from is not None:
            target_tokenizer = TargetTokenizer.load(Path(self.init_from) / TARGET_TOKENIZER_DIR)  # the base's vocabulary
        elif self.model_config.target_tokenizer == "bpe":
            saved = Path(out_dir) / TARGET_TOKENIZER_DIR
            if not resuming and runtime.is_main:
                targets = [r["target"] for r in self.train_rows]
                TargetTokenizer.train_bpe(targets, self.model_config.target_vocab_size).save(saved)
            runtime.barrier()
            target_tokenizer = TargetTokenizer.load(saved)
        model = NuggetModel.from_backbone(self.model_config, target_tokenizer)
        self.model = model
        # Without a residual the scorer takes no part in the loss; DDP must be told.
        self.find_unused_parameters = model.scorer is not None and not self.model_config.residual
        self.train_data = tokenize_pairs(model, self.train_rows)
        self.dev_data = tokenize_pairs(model, self.dev_rows) if self.dev_rows else None
        self.lengths = [len(s) for s in self.train_data.sources]
        # Starting weights (on resumption the engine then loads the checkpoint over them).
        if self.init_from is not None:
            self.loaded = model.initialize_from(self.init_from)
            log.info("%s: %d parameter tensors start from %s", out_dir, len(self.loaded), self.init_from)
        else:
            # output_bias_init unigram + output_weight_init zero: step 0 predicts exactly the unigram model
            # (the zero matrix gets gradient at once); the embedding copy keeps what the embedding knows.
            with torch.no_grad():
                if self.model_config.output_bias_init == "unigram":
                    model.decoder.final_logits_bias.copy_(unigram_output_bias(model, self.train_data))
                if self.model_config.output_weight_init == "zero":
                    model.decoder.output_projection.weight.zero_()
        # The stored documents are fixed from the corpus, not from the order they are met in (exact resumption).
        for cache, data in ((self.train_cache, self.train_data), (self.dev_cache, self.dev_data)):
            if cache is not None and data is not None:
                cache.plan([len(s) for s in data.sources], model.encoder.hidden_size)
        frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
        trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
        log.info("%s: %d trainable and %d frozen parameters on %s (world size %d)", out_dir, trainable, frozen,
                 runtime.device, runtime.world_size)
        target = model.processor.target_tokenizer
        self.derived = {"encoder_layers": model.encoder.num_layers, "hidden_size": model.encoder.hidden_size,
                        "frozen_layers": self.model_config.frozen_bottom, "frozen_parameters": frozen,
                        "trainable_parameters": trainable, "target_vocab_size": target.vocab_size,
                        "decoder_start_id": target.eos_id, "target_prefix_ids": target.prefix_ids,
                        "train_rows": len(self.train_rows), "dev_rows": len(self.dev_rows) if self.dev_rows else 0}
        if self.dev_data is not None:
            self.derived["unigram_nats"] = round(unigram_nats(model, self.dev_data), 6)
            log.info("%s: a unigram model of the targets has dev loss %.4f nats per token (ln V = %.4f)", out_dir,
                     self.derived["unigram_nats"], math.log(model.processor.target_tokenizer.vocab_size))

    def run_config(self) -> dict[str, Any]:
        return {"model": self.model_config.to_dict(), "init": {"from": self.init_from}, "derived": self.derived}

    def epoch_batches(self, epoch: int) -> list[list[int]]:
        return epoch_batches(self.lengths, self.cfg.batch_size, self.cfg.seed, epoch, self.cfg.length_sorted)

    def make_batch(self, spec: list[int], generator: torch.Generator):
        return make_batch(self.model, self.train_data, spec, generator, self.train_cache)

    def loss(self, module, batch) -> tuple[torch.Tensor, int]:
        return module(*batch), int(batch[1].sum())

    def evaluate(self, runtime: Runtime) -> dict[str, float] | None:
        if self.dev_data is None:
            return None
        return {"dev_loss": dev_loss(self.model, self.dev_data, self.cfg.dev_batch_size or self.cfg.batch_size,
                                     self.cfg.seed, runtime.autocast, self.dev_cache)}

    def parameter_groups(self, cfg: TrainConfig) -> list[dict[str, Any]]:
        return parameter_groups(self.model, cfg, self.loaded)


def train(model_config: NuggetConfig, train_config: TrainConfig, train_path: str | os.PathLike,
          dev_path: str | os.PathLike | None, out_dir: str | os.PathLike, *,
          init_from: str | os.PathLike | None = None, _interrupt_after: int | None = None) -> dict[str, Any]:
    """Train (or resume training) NUGGET/TSDAE and return the training summary (see ``Trainer.fit``);
    ``init_from``: a saved model (the shared r = 1 seq2seq) whose encoder and decoder it starts from."""
    train_rows = read_pairs(train_path)
    dev_rows = read_pairs(dev_path) if dev_path is not None else None
    task = NuggetTask(model_config, train_config, train_rows, dev_rows, init_from=init_from)
    return train_task(task, train_config, out_dir, _interrupt_after=_interrupt_after)

