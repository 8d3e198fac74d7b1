"""NUGGET's processor: text to the tensors ``NuggetModel`` reads (Qin & Van Durme, ICML 2023, §3 input, §4 targets).

As a Hugging Face ``transformers`` processor (``WhisperProcessor`` beside ``WhisperForConditionalGeneration``),
``NuggetProcessor`` owns the two tokenizers and turns text into tensors; the model (``modeling.py``) only models.
- §3 input: the source document x_1..x_n, tokenized by the encoder's own tokenizer (special tokens included,
  cut at ``max_source_tokens``), right-padded with its padding mask (``tokenize_sources``, ``collate_sources``);
  for the sentence-boundary selector (§7.1), 1 at each sentence-final token (``sentence_end_masks``);
- §4 targets: the decoder's vocabulary (``target_tokenizer.py``: ``prefix + tokens + [eos]``) and the
  teacher-forced batch, inputs ``[eos] + T[:-1]`` and labels ``T`` with the forced prefix and padding ignored
  (``target_batch``);
- files: ``source_tokenizer/`` and ``target_tokenizer/`` of a model folder (``save_pretrained``,
  ``from_pretrained``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import torch

from multivec.io import read_json
from multivec.nugget.configuration import NuggetConfig
from multivec.nugget.selection import sentence_final_token_mask
from multivec.nugget.target_tokenizer import TargetTokenizer
from multivec.training.batching import pad_sequences

CONFIG_FILE = "config.json"
SOURCE_TOKENIZER_DIR = "source_tokenizer"
TARGET_TOKENIZER_DIR = "target_tokenizer"
IGNORE_INDEX = -100


def load_source_tokenizer(ref_or_folder: str, src_lang: str):
    from transformers import AutoTokenizer

    from multivec.io.resources import resolve_model

    path = ref_or_folder if Path(ref_or_folder).is_dir() else resolve_model(ref_or_folder)
    tokenizer = AutoTokenizer.from_pretrained(path)
    if hasattr(tokenizer, "src_lang"):
        tokenizer.src_lang = src_lang  # mBART-50: sources start with the source language code
    return tokenizer


def sentence_end_masks(source_tokenizer, texts: Sequence[str], sentence_ends: Sequence[Sequence[int]],
                       max_tokens: int) -> list[list[int]]:
    """Per-token 1 at sentence-final tokens, aligned with ``source_tokenizer``'s ids of ``texts`` cut at
    ``max_tokens`` (``NuggetProcessor.tokenize_sources``).

    ``sentence_ends``: per text, the character offsets (exclusive) where its sentences end (the
    corpus rows' ``source_sentence_ends``). Needs a fast tokenizer (offset mapping). A batch pads
    them with 0 (``pad_sequences(masks, 0, device)``) and passes them as ``sentence_end_mask``.
    """
    if len(texts) != len(sentence_ends):
        raise ValueError(f"{len(texts)} texts but {len(sentence_ends)} sentence_ends lists")
    if not getattr(source_tokenizer, "is_fast", False):
        raise ValueError(f"source tokenizer {type(source_tokenizer).__name__} has no offset mapping: "
                         "the sentence-boundary selector needs a fast tokenizer")
    encoded = source_tokenizer(list(texts), truncation=True, max_length=max_tokens, add_special_tokens=True,
                               return_offsets_mapping=True, return_special_tokens_mask=True)
    masks = []
    for row, (text, ends) in enumerate(zip(texts, sentence_ends)):
        try:
            masks.append(sentence_final_token_mask(encoded["offset_mapping"][row], ends, text,
                                                   encoded["special_tokens_mask"][row]))
        except ValueError as error:
            raise ValueError(f"source {row} ({text[:40]!r}...): {error}") from None
    return masks


class NuggetProcessor:
    """The source tokenizer (the encoder's), the target tokenizer (the decoder's) and the source length limit.

    Tensors are built on the CPU and moved to ``device`` (the model's: ``model.device``)."""

    def __init__(self, source_tokenizer, target_tokenizer: TargetTokenizer, max_source_tokens: int):
        self.source_tokenizer = source_tokenizer
        self.target_tokenizer = target_tokenizer
        self.max_source_tokens = max_source_tokens

    # -- construction ----------------------------------------------------------------------------
    @classmethod
    def from_config(cls, config: NuggetConfig, target_tokenizer: TargetTokenizer | None = None) -> "NuggetProcessor":
        """The pretrained encoder's tokenizer and the target tokenizer ``config`` names: the source tokenizer
        itself (``target_tokenizer: source``) or ``target_tokenizer``, required for ``bpe`` (trained on the data)."""
        source_tokenizer = load_source_tokenizer(config.encoder, config.src_lang)
        if config.target_tokenizer == "source":
            target_tokenizer = TargetTokenizer.from_source(source_tokenizer, config.tgt_lang)
        elif target_tokenizer is None:
            raise ValueError("target_tokenizer: bpe needs a trained TargetTokenizer (TargetTokenizer.train_bpe)")
        return cls(source_tokenizer, target_tokenizer, config.max_source_tokens)

    def save_pretrained(self, out_dir: str | os.PathLike) -> None:
        """``source_tokenizer/`` and ``target_tokenizer/`` in the model folder ``out_dir``."""
        out = Path(out_dir)
        self.source_tokenizer.save_pretrained(str(out / SOURCE_TOKENIZER_DIR))
        self.target_tokenizer.save(out / TARGET_TOKENIZER_DIR)

    @classmethod
    def from_pretrained(cls, out_dir: str | os.PathLike, config: NuggetConfig | None = None) -> "NuggetProcessor":
        """The tokenizers of a model folder written by ``save_pretrained``, offline; ``config`` (the folder's
        ``config.json`` when not given) sets the source language and the source length limit."""
        out = Path(out_dir)
        if config is None:
            if not (out / CONFIG_FILE).exists():
                raise FileNotFoundError(f"{out / CONFIG_FILE} is missing: not a saved NUGGET model")
            config = NuggetConfig.from_dict(read_json(out / CONFIG_FILE)["model"])
        source_tokenizer = load_source_tokenizer(str(out / SOURCE_TOKENIZER_DIR), config.src_lang)
        target_tokenizer = TargetTokenizer.load(out / TARGET_TOKENIZER_DIR)
        return cls(source_tokenizer, target_tokenizer, config.max_source_tokens)

    # -- sources (§3) ----------------------------------------------------------------------------
    def tokenize_sources(self, texts: Sequence[str], max_tokens: int | None = None) -> list[list[int]]:
        max_tokens = max_tokens or self.max_source_tokens
        return self.source_tokenizer(list(texts), truncation=True, max_length=max_tokens,
                                     add_special_tokens=True)["input_ids"]

    def sentence_end_masks(self, texts: Sequence[str], sentence_ends: Sequence[Sequence[int]],
                           max_tokens: int | None = None) -> list[list[int]]:
        """Per-token 1 at sentence-final tokens, aligned with ``tokenize_sources(texts, max_tokens)``
        (see the module function ``sentence_end_masks``)."""
        return sentence_end_masks(self.source_tokenizer, texts, sentence_ends, max_tokens or self.max_source_tokens)

    def collate_sources(self, sequences: Sequence[Sequence[int]],
                        device: str | torch.device = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
        """Right-padded ids and the padding mask (1 = real token)."""
        return pad_sequences(sequences, self.source_tokenizer.pad_token_id, device)

    # -- targets (§4) ----------------------------------------------------------------------------
    def target_batch(self, targets: Sequence[Sequence[int]],
                     device: str | torch.device = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
        """Decoder inputs ``[eos] + T[:-1]`` and labels ``T`` (forced prefix and padding ignored)."""
        tok = self.target_tokenizer
        inputs = [[tok.eos_id] + list(t[:-1]) for t in targets]
        labels = [[IGNORE_INDEX] * len(tok.prefix_ids) + list(t[len(tok.prefix_ids):]) for t in targets]
        decoder_input_ids, _ = pad_sequences(inputs, tok.pad_id, device)
        label_ids, _ = pad_sequences(labels, IGNORE_INDEX, device)
        return decoder_input_ids, label_ids
