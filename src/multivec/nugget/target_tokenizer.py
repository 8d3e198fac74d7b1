"""The decoder's vocabulary (the output side of the paper's encoder-decoder, §3 and §4).

Two kinds, one interface:
- ``bpe``: a byte-level BPE trained with the ``tokenizers`` library on the training targets
  (demo scale: a small output layer keeps CPU steps cheap; bytes cover any script, Chinese included);
- ``source``: the encoder's own Hugging Face tokenizer (paper scale: mBART-50's pretrained decoder
  speaks that vocabulary; targets are tokenized with ``tgt_lang``).

Every target sequence is ``prefix + tokens + [eos]`` where the prefix is what the tokenizer always
puts first (``<s>``, ``[CLS]`` or a language code); generation forces the prefix and stops at eos.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from multivec.io import read_json, write_json

META_FILE = "target_tokenizer.json"
BPE_SPECIALS = ["<pad>", "<s>", "</s>", "<unk>"]


class TargetTokenizer:
    def __init__(self, kind: str, backend, tgt_lang: str | None = None):
        if kind not in ("bpe", "source"):
            raise ValueError(f"unknown target tokenizer kind {kind!r}")
        self.kind, self.backend, self.tgt_lang = kind, backend, tgt_lang
        if kind == "source" and tgt_lang is not None and hasattr(backend, "tgt_lang"):
            backend.tgt_lang = tgt_lang  # mBART-50: targets start with the target language code
        empty = self._encode_raw([""])[0]
        if len(empty) < 1:
            raise ValueError("the target tokenizer adds no end-of-sequence token; cannot delimit targets")
        self.prefix_ids: list[int] = empty[:-1]
        self.eos_id: int = empty[-1]
        if kind == "bpe":
            self.pad_id = backend.token_to_id("<pad>")
            self.vocab_size = backend.get_vocab_size()
        else:
            if backend.pad_token_id is None:
                raise ValueError("the source tokenizer has no pad token")
            self.pad_id = backend.pad_token_id
            self.vocab_size = len(backend)

    # -- construction --------------------------------------------------------------------------
    @classmethod
    def train_bpe(cls, texts: Sequence[str], vocab_size: int) -> "TargetTokenizer":
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

        tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
        tokenizer.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, special_tokens=BPE_SPECIALS,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
        tokenizer.train_from_iterator(texts, trainer=trainer, length=len(texts))
        bos, eos = tokenizer.token_to_id("<s>"), tokenizer.token_to_id("</s>")
        tokenizer.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>", special_tokens=[("<s>", bos), ("</s>", eos)])
        return cls("bpe", tokenizer)

    @classmethod
    def from_source(cls, source_tokenizer, tgt_lang: str | None) -> "TargetTokenizer":
        return cls("source", source_tokenizer, tgt_lang)

    # -- use -----------------------------------------------------------------------------------
    def _encode_raw(self, texts: Sequence[str]) -> list[list[int]]:
        if self.kind == "bpe":
            return [e.ids for e in self.backend.encode_batch(list(texts))]
        return self.backend(text_target=list(texts), add_special_tokens=True)["input_ids"]

    def encode(self, texts: Sequence[str], max_tokens: int) -> list[list[int]]:
        """Token ids with prefix and eos; longer sequences are cut, keeping the eos last."""
        out = []
        for ids in self._encode_raw(texts):
            if len(ids) > max_tokens:
                ids = ids[: max_tokens - 1] + [self.eos_id]
            out.append(ids)
        return out

    def decode(self, ids: Sequence[int]) -> str:
        # Both backends (tokenizers.Tokenizer and transformers tokenizers) share this call.
        return self.backend.decode(list(ids), skip_special_tokens=True).strip()

    # -- files ---------------------------------------------------------------------------------
    def save(self, folder: str | os.PathLike) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        if self.kind == "bpe":
            self.backend.save(str(folder / "tokenizer.json"))
        else:
            self.backend.save_pretrained(str(folder))
        write_json(folder / META_FILE, {"kind": self.kind, "tgt_lang": self.tgt_lang, "vocab_size": self.vocab_size,
                                        "eos_id": self.eos_id, "pad_id": self.pad_id, "prefix_ids": self.prefix_ids})

    @classmethod
    def load(cls, folder: str | os.PathLike) -> "TargetTokenizer":
        folder = Path(folder)
        if not (folder / META_FILE).exists():
            raise FileNotFoundError(f"{folder / META_FILE} is missing: not a saved target tokenizer")
        meta = read_json(folder / META_FILE)
        if meta["kind"] == "bpe":
            from tokenizers import Tokenizer

            try:
                backend = Tokenizer.from_file(str(folder / "tokenizer.json"))
            except Exception as err:  # tokenizers raises a bare Exception that names no file
                raise ValueError(f"{folder / 'tokenizer.json'}: not a readable tokenizer file "
                                 f"({str(err).splitlines()[0] if str(err) else type(err).__name__})") from None
            return cls("bpe", backend)
        from transformers import AutoTokenizer

        return cls("source", AutoTokenizer.from_pretrained(str(folder)), meta.get("tgt_lang"))
