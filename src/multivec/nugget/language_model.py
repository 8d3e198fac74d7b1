"""The NUGGET language model with compressed history (Qin & Van Durme 2023, §6.2, eq. 11-12, App. B.2).

p(y_i | y_{i-s:i-1}, Nugget(y_{1:i-s-1})) (eq. 12): the AE model's decoder is the LM. Its causal
self-attention reads the current segment of s target tokens; its cross-attention reads the memory of
the h segments before it, each encoded independently by the AE model's encoder:
- ``nuggets``: the nuggets of each history segment, concatenated in order, each with its residual score
  bias (eq. 5) -- NUGGET r = 0.05 / 0.1;
- ``mean``: one vector per history segment (the one-vector model r = 0, TSDAE's mean bottleneck);
- ``compressive``: the Compressive Transformer's mean-pooling compression (Rae et al. 2020): the last
  ``compress_tokens`` (512) token states of the history -- the AE encoder's last-layer states of the
  history segments' source tokens -- mean-pooled in windows of ``compress_window`` (16): 32 vectors;
- ``none``: no history (the full-attention Transformer over the current segment, h = 0).
Without history (h = 0, or a stream's first segment) the memory is a single zero vector that nothing
masks: cross-attention then adds a constant (the value bias), the same for every input.

The loss is the token cross-entropy of every token of the segment (trained in parallel, App. B.2).
Perplexity is over whole words (footnote 6): a word's NLL is the sum of its subwords' NLLs, words equal
to or containing the OOV token are excluded ("We exclude all out-of-vocabulary tokens during the
evaluation", §6.2.1), PPL = exp(mean word NLL) (``word_perplexity``). The OOV token is the one the streams carry for WikiText's
``<unk>`` (``multivec.nugget.lm_data``): the AE model's encoder tokenizer's unknown token unless
``LMSettings.oov_token`` names another.

``LanguageModelTask`` plugs the LM into the shared training engine (``multivec.training.engine``):
with ``freeze_encoder`` the history memories are computed once per segment and cached, and only the
decoder trains; each batch draws its h from ``train_histories``.
"""

from __future__ import annotations

import logging
import math
import os
from collections import Counter
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

import torch
from torch import nn

from multivec.nugget.lm_data import Segment, segment_streams, tokenize_stream
from multivec.nugget.losses import language_model_nll
from multivec.nugget.modeling import IGNORE_INDEX, Nuggets, NuggetModel
from multivec.nugget.training import parameter_groups as nugget_parameter_groups
from multivec.training.batching import pad_sequences
from multivec.training.distributed import Runtime
from multivec.training.engine import TrainConfig, TrainingTask, seeded_generator, train_task

log = logging.getLogger(__name__)

HISTORY_KINDS = ("nuggets", "mean", "compressive", "none")
MEMORY_POSITIONS = ("segment", "none")


@dataclass
class LMSettings:
    history: str  # one of HISTORY_KINDS
    segment_tokens: int = 128  # s
    train_histories: list[int] = field(default_factory=lambda: [1, 2, 4, 8])  # h drawn per batch
    compress_tokens: int = 512
    compress_window: int = 16
    freeze_encoder: bool = True  # history memories computed once and cached; only the decoder trains
    history_source_tokens: int = 256  # source tokens of a history segment the encoder reads (cut beyond)
    encode_batch_size: int = 16
    oov_token: str | None = None  # the OOV word perplexity leaves out; None: the encoder tokenizer's unk_token
    # With an AE model whose decoder reads positioned memory (``decoder_memory_positions``): ``segment`` adds
    # each nugget's position within its own history segment, as the AE decoder saw in training; ``none``
    # gives the LM the nugget vectors alone, as the mean and compressive histories are given (the default:
    # repeated per-segment positions misled the copying decoder, docs/nugget.md, Table 3).
    memory_positions: str = "none"

    def __post_init__(self) -> None:
        if self.history not in HISTORY_KINDS:
            raise ValueError(f"LMSettings.history={self.history!r}: expected one of {HISTORY_KINDS}")
        if not self.train_histories or any(h < 0 for h in self.train_histories):
            raise ValueError(f"LMSettings.train_histories={self.train_histories}: need non-negative h values")
        if self.memory_positions not in MEMORY_POSITIONS:
            raise ValueError(f"LMSettings.memory_positions={self.memory_positions!r}: expected one of "
                             f"{MEMORY_POSITIONS}")
        if self.compress_window < 1 or self.compress_tokens < self.compress_window:
            raise ValueError(f"LMSettings: compress_tokens={self.compress_tokens} must be >= compress_window="
                             f"{self.compress_window} >= 1")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "LMSettings":
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown LM settings {unknown}; known: {sorted(known)}")
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_history_model(model: NuggetModel, kind: str) -> None:
    """Refuse a history kind the AE model cannot produce (nuggets need a nugget model, mean a mean one)."""
    need = {"nuggets": "nuggets", "mean": "mean"}.get(kind)
    if need is not None and model.config.bottleneck != need:
        raise ValueError(f"history {kind!r} needs an AE model with bottleneck {need!r}, "
                         f"got {model.config.bottleneck!r}")


# -- history memory ----------------------------------------------------------------------------------
@dataclass
class Memory:
    vectors: torch.Tensor  # k × d
    scores: torch.Tensor | None  # k (nugget scores, for the residual bias), None otherwise


def encode_segments(model: NuggetModel, settings: LMSettings, texts: Sequence[str]) -> list[Memory]:
    """Per segment text, what the history kind keeps of it (gradients flow unless called under no_grad)."""
    kind = settings.history
    if kind == "none":
        return [Memory(torch.zeros(0, model.encoder.hidden_size, device=model.device), None) for _ in texts]
    check_history_model(model, kind)
    out: list[Memory] = []
    for start in range(0, len(texts), settings.encode_batch_size):
        chunk = list(texts[start:start + settings.encode_batch_size])
        sources = model.processor.tokenize_sources(chunk, settings.history_source_tokens)
        ids, mask = model.processor.collate_sources(sources, model.device)
        real = mask.bool()
        if kind == "compressive":
            hidden = model.encoder.finalize(model.encoder.run_bottom(ids, mask, model.encoder.num_layers))
            out += [Memory(hidden[row][real[row]], None) for row in range(len(chunk))]
            continue
        nuggets = model.encode(ids, mask)
        # What the decoder reads: with positions, the ones within the segment, so h segments repeat 0..k.
        memory = model.decoder_memory(nuggets) if settings.memory_positions == "segment" else nuggets.vectors
        for row in range(len(chunk)):
            keep = nuggets.mask[row]
            scores = nuggets.scores[row][keep] if nuggets.scores is not None else None
            out.append(Memory(memory[row][keep], scores))
    return out


def mean_pool_recent(states: torch.Tensor, keep: int, window: int) -> torch.Tensor:
    """The last ``keep`` states mean-pooled in windows of ``window``, windows aligned to the most recent
    state (a shorter first window when the count is not a multiple)."""
    states = states[-keep:]
    n, d = states.shape
    head = n % window
    pooled = [states[:head].mean(0, keepdim=True)] if head else []
    if n - head:
        pooled.append(states[head:].reshape(-1, window, d).mean(1))
    return torch.cat(pooled, 0) if pooled else states.new_zeros(0, d)


def history_memory(settings: LMSettings, history: Sequence[Memory], hidden_size: int, device) -> Memory:
    """The memory one segment cross-attends to, from its history segments' memories (oldest first)."""
    if settings.history != "none" and history:
        vectors = torch.cat([m.vectors for m in history], 0)
        if settings.history == "compressive":
            return Memory(mean_pool_recent(vectors, settings.compress_tokens, settings.compress_window), None)
        scores = None
        if all(m.scores is not None for m in history):
            scores = torch.cat([m.scores for m in history], 0)
        if len(vectors):
            return Memory(vectors, scores)
    return Memory(torch.zeros(1, hidden_size, device=device), None)  # no history: one zero vector


def collate_memory(model: NuggetModel, memories: Sequence[Memory]) -> tuple[torch.Tensor, torch.Tensor]:
    """Padded memory (B × K × d) and its cross-attention bias (padding blocked, residual scores added)."""
    width = max(len(m.vectors) for m in memories)
    d = memories[0].vectors.shape[-1]
    reference = memories[0].vectors
    vectors = reference.new_zeros(len(memories), width, d)
    mask = torch.zeros(len(memories), width, dtype=torch.bool, device=reference.device)
    with_scores = all(m.scores is not None for m in memories)
    scores = reference.new_zeros(len(memories), width, dtype=torch.float32) if with_scores else None
    for row, m in enumerate(memories):
        vectors[row, :len(m.vectors)] = m.vectors
        mask[row, :len(m.vectors)] = True
        if scores is not None:
            scores[row, :len(m.scores)] = m.scores.float()
    nuggets = Nuggets(vectors, mask, None, scores)
    return vectors, model.memory_bias(nuggets)


def history_indices(segments: Sequence[Segment], index: int, h: int) -> list[int]:
    """Indices of the (at most) h segments before ``segments[index]`` in its stream, oldest first
    (``segments`` is ordered by stream, then position)."""
    return list(range(index - min(h, segments[index].position), index))


# -- the LM ------------------------------------------------------------------------------------------
def lm_batch(model: NuggetModel, segments: Sequence[Segment]) -> tuple[torch.Tensor, torch.Tensor]:
    """Decoder inputs ``[eos] + ids[:-1]`` (eos starts every sequence, as in the AE model) and labels ``ids``."""
    tok = model.processor.target_tokenizer
    inputs, _ = pad_sequences([[tok.eos_id] + list(s.ids[:-1]) for s in segments], tok.pad_id, model.device)
    labels, _ = pad_sequences([list(s.ids) for s in segments], IGNORE_INDEX, model.device)
    return inputs, labels


class NuggetLanguageModel(nn.Module):
    """The AE model (encoder + decoder) used as an LM; ``forward`` returns per-token NLL (0 where no label)."""

    def __init__(self, nugget: NuggetModel, settings: LMSettings):
        super().__init__()
        self.nugget, self.settings = nugget, settings
        check_history_model(nugget, settings.history)
        if settings.freeze_encoder:
            for name, param in nugget.named_parameters():
                if not name.startswith("decoder."):
                    param.requires_grad_(False)

    def memory_for(self, history_texts: Sequence[Sequence[str]]) -> tuple[torch.Tensor, torch.Tensor]:
        """Memory of each row from its history segments' texts (encoded here, with gradients)."""
        flat = [t for texts in history_texts for t in texts]
        encoded = encode_segments(self.nugget, self.settings, flat) if flat else []
        memories, start = [], 0
        for texts in history_texts:
            memories.append(history_memory(self.settings, encoded[start:start + len(texts)],
                                           self.nugget.encoder.hidden_size, self.nugget.device))
            start += len(texts)
        return collate_memory(self.nugget, memories)

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor, history) -> torch.Tensor:
        """``history``: ``(memory, bias)`` precomputed (frozen encoder), or per row the history texts."""
        memory, bias = history if isinstance(history, tuple) else self.memory_for(history)
        hidden, _ = self.nugget.decoder(input_ids, memory, bias)
        return language_model_nll(self.nugget.decoder.logits(hidden), labels, IGNORE_INDEX)


# -- perplexity over words (footnote 6) --------------------------------------------------------------
def word_perplexity(token_nll: Sequence[float], token_word: Sequence[Any], words: dict[Any, tuple[str, int]],
                    oov_token: str = "<unk>") -> dict[str, float]:
    """exp(mean word NLL): a word's NLL sums its subwords' NLLs; OOV words (those containing ``oov_token``:
    detokenised text attaches punctuation, "[UNK],") are excluded, and so are words whose tokens were not
    all evaluated. ``token_word``: per token, its word's key in ``words``
    (key -> (word, number of subword tokens))."""
    if len(token_nll) != len(token_word):
        raise ValueError(f"{len(token_nll)} token NLLs but {len(token_word)} token words")
    sums: dict[Any, float] = {}
    counts: dict[Any, int] = {}
    for nll, key in zip(token_nll, token_word):
        sums[key] = sums.get(key, 0.0) + float(nll)
        counts[key] = counts.get(key, 0) + 1
    kept = [k for k in sums if oov_token not in words[k][0] and counts[k] == words[k][1]]
    if not kept:
        raise ValueError("no in-vocabulary word was fully evaluated: perplexity undefined")
    mean = sum(sums[k] for k in kept) / len(kept)
    return {"ppl": math.exp(mean), "word_nll": mean, "words": len(kept),
            "oov_words": sum(1 for k in sums if oov_token in words[k][0]), "tokens": len(token_nll),
            "token_ppl": math.exp(sum(sums.values()) / max(len(token_nll), 1))}


class SegmentData:
    """Segments of tokenized streams, with the per-segment memories when the encoder is frozen."""

    def __init__(self, model: NuggetModel, settings: LMSettings, streams, max_segments: int | None = None):
        tok = model.processor.target_tokenizer
        self.streams = []
        available = 0
        for stream in streams:  # tokenise only the streams the first ``max_segments`` segments need
            if max_segments is not None and available >= max_segments:
                break
            self.streams.append(tokenize_stream(tok, stream))
            available += math.ceil(len(self.streams[-1].ids) / settings.segment_tokens)
        self.segments = segment_streams(tok, self.streams, settings.segment_tokens, max_segments)
        self.settings = settings
        # the word the streams carry for WikiText's <unk> (lm_data.wikitext_streams): perplexity leaves it out
        self.oov_token = settings.oov_token or model.processor.source_tokenizer.unk_token
        if not self.oov_token:
            raise ValueError("LM perplexity: the encoder tokenizer has no unknown token and LMSettings.oov_token "
                             "is unset: name the out-of-vocabulary word to leave out")
        self.memories: list[Memory] | None = None
        if settings.freeze_encoder:
            was_training = model.training
            model.eval()
            with torch.no_grad():
                self.memories = encode_segments(model, settings, [s.text for s in self.segments])
            model.train(was_training)

    def history(self, lm: NuggetLanguageModel, rows: Sequence[int], h: int):
        """The ``history`` argument of ``NuggetLanguageModel.forward`` for these segments at h."""
        nugget = lm.nugget
        indices = [history_indices(self.segments, i, h) for i in rows]
        if self.memories is None:
            return [[self.segments[j].text for j in idx] for idx in indices]
        memories = [history_memory(self.settings, [self.memories[j] for j in idx], nugget.encoder.hidden_size,
                                   nugget.device) for idx in indices]
        return collate_memory(nugget, memories)

    def batch(self, lm: NuggetLanguageModel, rows: Sequence[int], h: int):
        input_ids, labels = lm_batch(lm.nugget, [self.segments[i] for i in rows])
        return input_ids, labels, self.history(lm, rows, h)


def evaluate(lm: NuggetLanguageModel, data: SegmentData, h: int, batch_size: int, autocast=None) -> dict[str, float]:
    """Word-level perplexity of every segment of ``data`` with h history segments."""
    return evaluate_segments(lm, data, h, batch_size, autocast)[0]


def segment_word_nll(token_nll: Sequence[float], token_word: Sequence[Any], token_segment: Sequence[Any],
                     words: dict[Any, tuple[str, int]], oov_token: str = "<unk>") -> dict[Any, tuple[float, int]]:
    """Per segment: (summed NLL of its words, number of words), over the words ``word_perplexity`` keeps; a
    word belongs to the segment of its first token. Summed over segments, exp(NLL / words) is the
    perplexity ``word_perplexity`` gives (the per-unit components of the ``perplexity`` statistic)."""
    if not len(token_nll) == len(token_word) == len(token_segment):
        raise ValueError(f"{len(token_nll)} token NLLs, {len(token_word)} token words, {len(token_segment)} segments")
    sums: dict[Any, float] = {}
    counts: dict[Any, int] = {}
    first: dict[Any, Any] = {}
    for nll, key, segment in zip(token_nll, token_word, token_segment):
        sums[key] = sums.get(key, 0.0) + float(nll)
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, segment)
    out: dict[Any, tuple[float, int]] = {segment: (0.0, 0) for segment in dict.fromkeys(token_segment)}
    for key in sums:
        if oov_token not in words[key][0] and counts[key] == words[key][1]:
            nll, n = out[first[key]]
            out[first[key]] = (nll + sums[key], n + 1)
    return out


def segment_unit_id(stream, position) -> str:
    """The evaluation-unit id of the test segment at ``position`` of ``stream``: ``"<stream>:<position>"``
    (``statistics.clusters`` clusters these by stream)."""
    return f"{stream}:{position}"


def evaluate_segments(lm: NuggetLanguageModel, data: SegmentData, h: int, batch_size: int,
                      autocast=None) -> tuple[dict[str, float], dict[str, tuple[float, int]]]:
    """``evaluate``'s summary and, per segment (``"<stream>:<position>"``), its words' summed NLL and count."""
    autocast = autocast or nullcontext
    was_training = lm.training
    lm.eval()
    token_nll: list[float] = []
    token_word: list[tuple[int, int]] = []
    token_segment: list[str] = []
    with torch.no_grad():
        for start in range(0, len(data.segments), batch_size):
            rows = list(range(start, min(start + batch_size, len(data.segments))))
            batch = data.batch(lm, rows, h)
            with autocast():
                nll = lm(*batch)
            for row, i in enumerate(rows):
                seg = data.segments[i]
                token_nll += nll[row, :len(seg.ids)].tolist()
                token_word += [(seg.stream, w) for w in seg.word_index]
                token_segment += [segment_unit_id(seg.stream, seg.position)] * len(seg.word_index)
    lm.train(was_training)
    counts = [Counter(stream.word_index) for stream in data.streams]  # subword tokens per word
    words = {(s, w): (data.streams[s].words[w], counts[s][w]) for s, w in set(token_word)}
    return (word_perplexity(token_nll, token_word, words, data.oov_token),
            segment_word_nll(token_nll, token_word, token_segment, words, data.oov_token))


# -- training (engine plug-in) -----------------------------------------------------------------------
class LanguageModelTask(TrainingTask):
    """One LM per history kind, initialised from an AE model; h drawn per batch from ``train_histories``."""

    dev_metrics = ("dev_loss",)
    selection_metric = "dev_loss"
    selection_mode = "min"
    throughput_unit = "tokens"

    def __init__(self, settings: LMSettings, init_dir: str | os.PathLike, cfg: TrainConfig, train_streams,
                 dev_streams=None, max_dev_segments: int | None = None, max_train_segments: int | None = None):
        self.settings, self.init_dir, self.cfg = settings, Path(init_dir), cfg
        self.train_streams, self.dev_streams, self.max_dev_segments = train_streams, dev_streams, max_dev_segments
        self.max_train_segments = max_train_segments
        self.name = f"lm-{settings.history}"

    def setup(self, out_dir: Path, runtime: Runtime, resuming: bool) -> None:
        nugget = NuggetModel.from_pretrained(self.init_dir, device=runtime.device)
        self.model = NuggetLanguageModel(nugget, self.settings)
        self.model.train()
        # Streams in a seeded order, so a segment cap samples every source, not the first in name order.
        order = torch.randperm(len(self.train_streams), generator=seeded_generator(self.cfg.seed, "lm-streams"))
        self.train_data = SegmentData(nugget, self.settings, [self.train_streams[i] for i in order.tolist()],
                                      self.max_train_segments)
        self.dev_data = (SegmentData(nugget, self.settings, self.dev_streams, self.max_dev_segments)
                         if self.dev_streams else None)
        trainable = sum(p.numel() for p in self.model.parameters() if p.requires_grad)
        self.derived = {"init": str(self.init_dir), "train_segments": len(self.train_data.segments),
                        "dev_segments": len(self.dev_data.segments) if self.dev_data else 0,
                        "trainable_parameters": trainable}
        log.info("%s: LM (%s history) with %d trainable parameters, %d training segments", out_dir,
                 self.settings.history, trainable, len(self.train_data.segments))

    def run_config(self) -> dict[str, Any]:
        return {"model": self.model.nugget.config.to_dict(), "lm": self.settings.to_dict(), "derived": self.derived}

    def epoch_batches(self, epoch: int) -> list[tuple[int, list[int]]]:
        generator = seeded_generator(self.cfg.seed, "lm-epoch", epoch)
        order = torch.randperm(len(self.train_data.segments), generator=generator).tolist()
        batches = [order[i:i + self.cfg.batch_size] for i in range(0, len(order), self.cfg.batch_size)]
        draws = torch.randint(len(self.settings.train_histories), (len(batches),), generator=generator).tolist()
        return [(self.settings.train_histories[d], rows) for d, rows in zip(draws, batches)]

    def make_batch(self, spec: tuple[int, list[int]], generator: torch.Generator):
        h, rows = spec
        return self.train_data.batch(self.model, rows, h)

    def loss(self, module, batch) -> tuple[torch.Tensor, int]:
        nll = module(*batch)
        tokens = int((batch[1] != IGNORE_INDEX).sum())
        return nll.sum() / max(tokens, 1), tokens

    def evaluate(self, runtime: Runtime) -> dict[str, float] | None:
        if self.dev_data is None:
            return None
        h = max(self.settings.train_histories)
        was_training = self.model.training
        self.model.eval()
        total, count = 0.0, 0
        with torch.no_grad():
            for start in range(0, len(self.dev_data.segments), self.cfg.dev_batch_size or self.cfg.batch_size):
                rows = list(range(start, min(start + (self.cfg.dev_batch_size or self.cfg.batch_size),
                                             len(self.dev_data.segments))))
                batch = self.dev_data.batch(self.model, rows, h)
                with runtime.autocast():
                    total += float(self.model(*batch).sum())
                count += int((batch[1] != IGNORE_INDEX).sum())
        self.model.train(was_training)
        return {"dev_loss": total / max(count, 1)}

    def parameter_groups(self, cfg: TrainConfig) -> list[dict[str, Any]]:
        # As for the AE model: parts trained from scratch there (the demo decoder) keep ``lr_scratch``.
        return nugget_parameter_groups(self.model.nugget, cfg)

    # The LM folder is a NuggetModel folder (loadable with NuggetModel.from_pretrained) plus ``lm`` settings.
    def save_weights(self, path: Path) -> None:
        self.model.nugget.save_weights(path)

    def load_weights(self, path: Path) -> None:
        self.model.nugget.load_weights(path)

    def save_metadata(self, out_dir: Path, run_config: dict[str, Any]) -> None:
        self.model.nugget.save_metadata(out_dir, {k: v for k, v in run_config.items() if k != "model"})


def train(settings: LMSettings, init_dir, train_config: TrainConfig, train_streams, dev_streams, out_dir,
          max_dev_segments: int | None = None, max_train_segments: int | None = None) -> dict[str, Any]:
    task = LanguageModelTask(settings, init_dir, train_config, train_streams, dev_streams, max_dev_segments,
                             max_train_segments)
    return train_task(task, train_config, out_dir)


def load(out_dir: str | os.PathLike, device: str = "cpu") -> NuggetLanguageModel:
    """A trained LM folder (written by ``train``)."""
    from multivec.io import read_json

    settings = LMSettings.from_dict(read_json(Path(out_dir) / "config.json")["lm"])
    return NuggetLanguageModel(NuggetModel.from_pretrained(out_dir, device=device), settings)
