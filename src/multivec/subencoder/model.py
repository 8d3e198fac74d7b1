"""The sub-sentence encoder (Chen et al. 2023, §3.1): a transformer encoder with full attention over the
sentence, mean pooling of its token states over each proposition's token mask, then an MLP
(Linear → ReLU → Linear) whose output dimension is configurable (64 for Table 5).

``SubEncoder.encode(sentences, masks)`` forwards each sentence ONCE for all of its propositions; the
App. C.1 encodings of an untrained sentence encoder are the same class without a head (``head="none"``):
``strategy="mask_pooling"`` (full attention, mask at pooling: the SubEncoder's own), ``"full_mask"``
(the mask is also the attention mask: one forward per proposition) and ``"token_subset"`` (only the
proposition's subwords, re-wrapped in the special tokens, are encoded; pooled over them).

T5 backbones (sentence-t5, gtr-t5) use their encoder only. A trained model is a folder (``config.json``,
``backbone/`` config + tokenizer, ``model.safetensors``) that ``SubEncoder.load(folder)`` reads in one call.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import torch
from torch import nn

from multivec.io import read_json, write_json
from multivec.subencoder.configuration import SubEncoderConfig
from multivec.training.batching import pad_sequences

WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "config.json"
BACKBONE_DIR = "backbone"
STRATEGIES = ("mask_pooling", "full_mask", "token_subset")


def _load_backbone(ref: str):
    """(encoder module, tokenizer, backbone config) for a model reference; T5: the encoder stack only."""
    from transformers import AutoConfig, AutoModel, AutoTokenizer, T5EncoderModel

    from multivec.io.resources import is_tiny_random, resolve_model, tiny_random_config

    path = resolve_model(ref)
    tokenizer = AutoTokenizer.from_pretrained(path)
    if is_tiny_random(ref):
        torch.manual_seed(0)  # the same tiny random weights every time
        config = tiny_random_config(ref)
        return _backbone_from_config(config), tokenizer, config
    config = AutoConfig.from_pretrained(path)
    if config.model_type in ("t5", "mt5"):
        return T5EncoderModel.from_pretrained(path), tokenizer, config
    return AutoModel.from_pretrained(path, add_pooling_layer=False) if config.model_type == "bert" \
        else AutoModel.from_pretrained(path), tokenizer, config


def _backbone_from_config(config):
    from transformers import AutoModel, T5EncoderModel

    if config.model_type in ("t5", "mt5"):
        return T5EncoderModel(config)
    if config.model_type == "bert":
        return AutoModel.from_config(config, add_pooling_layer=False)
    return AutoModel.from_config(config)


def masked_mean(states: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Mean of ``states`` (P, T, H) over the 1s of ``masks`` (P, T); an all-zero mask is an error."""
    weights = masks.to(states.dtype)
    counts = weights.sum(1, keepdim=True)
    if bool((counts == 0).any()):
        raise ValueError("a proposition mask selects no token (empty, or truncated away by max_tokens)")
    return torch.einsum("pt,pth->ph", weights, states) / counts


class SubEncoder(nn.Module):
    """Encoder + mask pooling + MLP head (or no head). Build with ``from_backbone``, read with ``load``."""

    def __init__(self, config: SubEncoderConfig, encoder: nn.Module, tokenizer, backbone_config):
        super().__init__()
        self.config, self.encoder, self.tokenizer, self.backbone_config = config, encoder, tokenizer, backbone_config
        hidden = backbone_config.d_model if hasattr(backbone_config, "d_model") else backbone_config.hidden_size
        self.hidden_size = hidden
        if config.head == "mlp":
            inner = config.mlp_hidden or hidden
            layers = [nn.Linear(hidden, inner), nn.ReLU(), nn.Linear(inner, config.output_dim or hidden)]
            if config.projection_dim is not None:
                layers.append(nn.Linear(config.output_dim or hidden, config.projection_dim))
            self.head: nn.Module = nn.Sequential(*layers)
            self.output_dim = config.projection_dim or config.output_dim or hidden
        else:
            if config.output_dim not in (None, hidden):
                raise ValueError(f"subencoder.model.output_dim={config.output_dim} needs head 'mlp' (no head "
                                 f"keeps the encoder's {hidden} dimensions)")
            self.head = nn.Identity()
            self.output_dim = hidden

    @classmethod
    def from_backbone(cls, config: SubEncoderConfig) -> "SubEncoder":
        encoder, tokenizer, backbone_config = _load_backbone(config.encoder)
        model = cls(config, encoder, tokenizer, backbone_config)
        if config.head == "mlp":
            torch.manual_seed(0)  # the head's initialisation does not depend on what ran before
            for layer in model.head:
                if isinstance(layer, nn.Linear):
                    layer.reset_parameters()
        return model

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    # -- the forward pass ------------------------------------------------------------------------------
    def token_states(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, prop_masks: torch.Tensor,
                prop_sentence: torch.Tensor) -> torch.Tensor:
        """Sentences (B, T) forwarded once; proposition p pools sentence ``prop_sentence[p]`` over
        ``prop_masks[p]`` (P, T). Returns (P, output_dim)."""
        states = self.token_states(input_ids, attention_mask)
        pooled = masked_mean(states[prop_sentence], prop_masks * attention_mask[prop_sentence])
        return self.head(pooled)

    # -- tokenisation and masks ------------------------------------------------------------------------
    @property
    def position_limit(self) -> int:
        """The longest input the encoder takes (T5's relative positions: 512, as its pretraining)."""
        return int(getattr(self.backbone_config, "max_position_embeddings", None) or 512)

    def tokenize(self, sentences: Sequence[str], max_tokens: int | None = None) -> dict[str, list]:
        """``input_ids``, ``offset_mapping``, ``special_tokens_mask`` per sentence, truncated to ``max_tokens``
        (default: the config's ``max_tokens``, the training length)."""
        return self.tokenizer(list(sentences), truncation=True, max_length=max_tokens or self.config.max_tokens,
                              return_offsets_mapping=True, return_special_tokens_mask=True)

    def span_masks(self, sentences: Sequence[str], spans: Sequence[Sequence[Sequence[Sequence[int]]]],
                   max_tokens: int | None = None) -> tuple[dict[str, list], list[list[list[int]]]]:
        """Tokenise ``sentences`` and turn each proposition's character spans into a subword mask
        (``multivec.subencoder.masks.spans_to_token_mask``)."""
        from multivec.subencoder.masks import spans_to_token_mask

        if len(spans) != len(sentences):
            raise ValueError(f"{len(sentences)} sentences but {len(spans)} lists of proposition spans")
        encoded = self.tokenize(sentences, max_tokens)
        masks = [[spans_to_token_mask(encoded["offset_mapping"][i], prop, encoded["special_tokens_mask"][i])
                  for prop in spans[i]] for i in range(len(sentences))]
        return encoded, masks

    # -- encoding --------------------------------------------------------------------------------------
    @torch.no_grad()
    def encode(self, sentences: Sequence[str], masks: Sequence[Sequence[Sequence[int]]], *,
               strategy: str = "mask_pooling", batch_size: int = 32, input_ids: Sequence[Sequence[int]] | None = None
               ) -> torch.Tensor:
        """One vector per proposition, sentence-major: ``masks[i]`` are sentence i's subword masks (each as
        long as its tokenisation, see ``tokenize``). ``mask_pooling`` forwards each sentence once for all its
        propositions. Returns a float tensor (sum of len(masks[i]), output_dim) on the CPU."""
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy={strategy!r}: expected one of {', '.join(STRATEGIES)}")
        if strategy != "mask_pooling" and self.config.head != "none":
            raise ValueError(f"strategy {strategy!r} is a baseline of an untrained encoder (App. C.1); "
                             "a SubEncoder encodes with 'mask_pooling'")
        if len(masks) != len(sentences):
            raise ValueError(f"{len(sentences)} sentences but {len(masks)} lists of masks")
        ids = list(input_ids) if input_ids is not None else self.tokenize(sentences)["input_ids"]
        for i, (sentence_ids, props) in enumerate(zip(ids, masks)):
            for j, mask in enumerate(props):
                if len(mask) != len(sentence_ids):
                    raise ValueError(f"sentence {i}, proposition {j}: mask of length {len(mask)} for "
                                     f"{len(sentence_ids)} tokens")
                if not any(mask):
                    raise ValueError(f"sentence {i}, proposition {j}: the mask selects no token "
                                     f"(sentence: {sentences[i][:80]!r})")
        was_training = self.training
        self.eval()
        try:
            if strategy == "mask_pooling":
                return self._encode_once_per_sentence(ids, masks, batch_size)
            return self._encode_per_proposition(ids, masks, strategy, batch_size)
        finally:
            self.train(was_training)

    def _pad(self, rows: Sequence[Sequence[int]], value: int) -> torch.Tensor:
        return pad_sequences(rows, value, self.device)[0]

    def _encode_once_per_sentence(self, ids, masks, batch_size: int) -> torch.Tensor:
        pad_id = self.tokenizer.pad_token_id or 0
        order = sorted((i for i in range(len(ids)) if masks[i]), key=lambda i: len(ids[i]))
        out: dict[int, torch.Tensor] = {}
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            input_ids = self._pad([ids[i] for i in chunk], pad_id)
            attention = self._pad([[1] * len(ids[i]) for i in chunk], 0)
            prop_rows = [(k, mask) for k, i in enumerate(chunk) for mask in masks[i]]
            prop_masks = self._pad([m for _, m in prop_rows], 0)
            prop_masks = torch.nn.functional.pad(prop_masks, (0, input_ids.shape[1] - prop_masks.shape[1]))
            prop_sentence = torch.tensor([k for k, _ in prop_rows], device=self.device)
            vectors = self(input_ids, attention, prop_masks, prop_sentence).float().cpu()
            position = 0
            for i in chunk:
                out[i] = vectors[position:position + len(masks[i])]
                position += len(masks[i])
        return self._in_order(out, len(ids))

    def _encode_per_proposition(self, ids, masks, strategy: str, batch_size: int) -> torch.Tensor:
        pad_id = self.tokenizer.pad_token_id or 0
        items = [(i, mask) for i in range(len(ids)) for mask in masks[i]]
        vectors = []
        for start in range(0, len(items), batch_size):
            chunk = items[start:start + batch_size]
            if strategy == "full_mask":
                input_ids = self._pad([ids[i] for i, _ in chunk], pad_id)
                attention = self._pad([m for _, m in chunk], 0)
                pool = attention
            else:  # token_subset: the proposition's subwords only, inside the special tokens
                prefix, suffix = self._special_wrapping()
                subsets = [[t for t, keep in zip(ids[i], m) if keep] for i, m in chunk]
                wrapped = [prefix + s + suffix for s in subsets]
                input_ids = self._pad(wrapped, pad_id)
                attention = self._pad([[1] * len(w) for w in wrapped], 0)
                pool = self._pad([[0] * len(prefix) + [1] * len(s) + [0] * len(suffix) for s in subsets], 0)
            states = self.token_states(input_ids, attention)
            vectors.append(self.head(masked_mean(states, pool)).float().cpu())
        return torch.cat(vectors) if vectors else torch.zeros(0, self.output_dim)

    def _special_wrapping(self) -> tuple[list[int], list[int]]:
        """The special tokens the tokenizer puts before and after a text ([CLS] … [SEP]; T5: … </s>)."""
        empty = self.tokenizer("", add_special_tokens=True)["input_ids"]
        starts = {self.tokenizer.cls_token_id, self.tokenizer.bos_token_id} - {None}
        split = 1 if empty and empty[0] in starts else 0
        return list(empty[:split]), list(empty[split:])

    def _in_order(self, by_sentence: dict[int, torch.Tensor], count: int) -> torch.Tensor:
        parts = [by_sentence[i] for i in range(count) if i in by_sentence]
        return torch.cat(parts) if parts else torch.zeros(0, self.output_dim)

    # -- saving and loading ----------------------------------------------------------------------------
    def save_metadata(self, out_dir: str | os.PathLike, extra: dict | None = None) -> None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        write_json(out / CONFIG_FILE, {"model": self.config.to_dict(), **(extra or {})})
        self.backbone_config.save_pretrained(str(out / BACKBONE_DIR))
        self.tokenizer.save_pretrained(str(out / BACKBONE_DIR))

    def save_weights(self, path: str | os.PathLike) -> None:
        from safetensors.torch import save_model

        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        save_model(self, str(tmp))
        os.replace(tmp, path)

    def load_weights(self, path: str | os.PathLike) -> None:
        from multivec.io.safe_loading import load_safetensors_into

        missing, unexpected = load_safetensors_into(self, path, strict=False)
        if missing or unexpected:
            raise ValueError(f"{path}: weights do not match the model (missing {missing}, unexpected {unexpected})")

    def save_pretrained(self, out_dir: str | os.PathLike, extra: dict | None = None) -> None:
        self.save_metadata(out_dir, extra)
        self.save_weights(Path(out_dir) / WEIGHTS_FILE)

    @classmethod
    def load(cls, folder: str | os.PathLike, device: str | torch.device = "cpu") -> "SubEncoder":
        """A trained SubEncoder from its folder, offline, in one call."""
        from transformers import AutoConfig, AutoTokenizer

        folder = Path(folder)
        for needed in (CONFIG_FILE, WEIGHTS_FILE, BACKBONE_DIR):
            if not (folder / needed).exists():
                raise FileNotFoundError(f"{folder / needed} is missing: not a saved SubEncoder folder")
        saved = read_json(folder / CONFIG_FILE)
        if "model" not in saved:
            raise ValueError(f"{folder / CONFIG_FILE}: no 'model' key")
        config = SubEncoderConfig.from_dict(saved["model"])
        backbone_config = AutoConfig.from_pretrained(str(folder / BACKBONE_DIR))
        tokenizer = AutoTokenizer.from_pretrained(str(folder / BACKBONE_DIR))
        model = cls(config, _backbone_from_config(backbone_config), tokenizer, backbone_config)
        model.load_weights(folder / WEIGHTS_FILE)
        return model.to(device).eval()
