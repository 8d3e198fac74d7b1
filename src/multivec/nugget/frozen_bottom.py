"""The frozen bottom's token states, computed once per task and shared by every NUGGET model.

NUGGET (§3.3, §4) freezes the embeddings and the encoder layers up to the scorer layer l, so the
states the scorer reads (eq. 2: the layer-l states) are the pretrained encoder's own and identical for
every NUGGET model built on that encoder, whatever its ratio or objective. Encoding a task with five
NUGGET rows then runs the bottom l layers once (this module) and each model's trained top
(layers l+1..L, scorer, feedback, W^V) from the stored states: on MiniLM with l = 3 of 6 layers,
about half of each model's encoding.

Artifact (a folder): ``states.safetensors`` with ``states`` (all documents' token states, float32,
concatenated: T × d) and ``offsets`` (N + 1 row starts), and ``info.json`` (encoder, layer, length
limit, document ids, and the sha256 of the token ids). A model reads them only if its own settings
and token ids match, and checks one batch against its own bottom: a stale or foreign cache is an
error, never a silent wrong encoding.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
from tqdm import tqdm

from multivec.io import read_json, write_json

STATES_FILE = "states.safetensors"
INFO_FILE = "info.json"
# A model's own bottom and the stored states agree to float32 rounding (batch shapes differ).
CHECK_TOLERANCE = 1e-3


def token_ids_digest(input_ids: Sequence[Sequence[int]]) -> str:
    """sha256 of the token ids, document by document: ties stored states to the exact inputs."""
    digest = hashlib.sha256()
    for ids in input_ids:
        digest.update(np.asarray(ids, dtype=np.int64).tobytes())
        digest.update(b"|")
    return digest.hexdigest()


def bottom_settings(model_config) -> dict[str, Any]:
    """What the bottom's states depend on, from a ``NuggetConfig``."""
    return {"encoder": model_config.encoder, "architecture": model_config.architecture,
            "src_lang": model_config.src_lang, "layer": model_config.scorer_layer}


@dataclass
class BottomStates:
    info: dict[str, Any]
    states: torch.Tensor  # T × d float32
    offsets: np.ndarray  # N + 1

    def document(self, index: int) -> torch.Tensor:
        return self.states[int(self.offsets[index]):int(self.offsets[index + 1])]

    def batch(self, indices: Sequence[int], width: int) -> torch.Tensor:
        """B × width × d, zero-padded on the right (padding is masked in attention)."""
        out = torch.zeros(len(indices), width, self.states.shape[1], dtype=self.states.dtype)
        for row, i in enumerate(indices):
            doc = self.document(i)
            out[row, :len(doc)] = doc
        return out

    def check_compatible(self, model, max_tokens: int, input_ids: Sequence[Sequence[int]]) -> None:
        """Refuse states computed for another encoder, layer, length limit or text."""
        if not model.bottom_is_pretrained:
            raise ValueError(f"this model trains layers below its scorer (frozen_layers={model.config.frozen_layers}, "
                             f"scorer_layer={model.config.scorer_layer}): it cannot use a shared frozen bottom")
        expected = {**bottom_settings(model.config), "max_tokens": max_tokens}
        differs = [k for k, v in expected.items() if self.info.get(k) != v]
        if differs:
            raise ValueError("stored frozen-bottom states were computed with other settings: "
                             + ", ".join(f"{k}={self.info.get(k)!r} (model: {expected[k]!r})" for k in differs))
        if self.info["token_ids_sha256"] != token_ids_digest(input_ids):
            raise ValueError("stored frozen-bottom states belong to other documents or another tokenisation "
                             "(token-id digest differs): rebuild them")


def write_bottom_states(out_dir: str | os.PathLike, ids: Sequence[str], texts: Sequence[str], model_config,
                        max_tokens: int | None, batch_size: int = 32) -> dict[str, Any]:
    """Run the pretrained encoder's bottom (embeddings + layers 1..l) over ``texts`` and store the states."""
    from safetensors.torch import save_file

    from multivec.baselines.base_encoder import length_sorted_batches, tokenize_documents
    from multivec.encodings import encoder_token_limit
    from multivec.nugget.encoder_adapter import BertEncoderAdapter, MBartEncoderAdapter
    from multivec.nugget.modeling import _backbone
    from multivec.nugget.processing import load_source_tokenizer
    from multivec.training.batching import pad_sequences

    if len(ids) != len(texts):
        raise ValueError(f"{len(ids)} ids but {len(texts)} texts")
    torch.manual_seed(model_config.seed)  # as NuggetModel.from_backbone: tiny random encoders are seeded
    backbone = _backbone(model_config)
    encoder = (MBartEncoderAdapter(backbone.model.encoder) if model_config.architecture == "mbart"
               else BertEncoderAdapter(backbone)).eval()
    tokenizer = load_source_tokenizer(model_config.encoder, model_config.src_lang)
    tokenized = tokenize_documents(tokenizer, texts, max_tokens, encoder_token_limit(backbone.config))
    sources = tokenized.input_ids
    lengths = [len(s) for s in sources]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    states = torch.zeros(int(offsets[-1]), encoder.hidden_size, dtype=torch.float32)
    with torch.inference_mode():
        for chunk in tqdm(length_sorted_batches(lengths, batch_size), desc="frozen bottom", unit="batch"):
            chunk = chunk.tolist()
            input_ids, mask = pad_sequences([sources[i] for i in chunk], tokenizer.pad_token_id, "cpu")
            hidden = encoder.run_bottom(input_ids, mask, model_config.scorer_layer).float()
            for row, i in enumerate(chunk):
                states[offsets[i]:offsets[i + 1]] = hidden[row, :lengths[i]]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    save_file({"states": states, "offsets": torch.from_numpy(offsets)}, str(out / STATES_FILE))
    info = {**bottom_settings(model_config), "max_tokens": tokenized.max_tokens, "documents": len(ids),
            "tokens": int(offsets[-1]), "hidden_size": encoder.hidden_size, "dtype": "float32",
            "token_ids_sha256": token_ids_digest(sources), "truncation": tokenized.truncation(), "ids": list(ids)}
    write_json(out / INFO_FILE, info)
    return info


def read_bottom_states(folder: str | os.PathLike) -> BottomStates:
    from multivec.io.safe_loading import read_safetensors

    folder = Path(folder)
    for name in (STATES_FILE, INFO_FILE):
        if not (folder / name).exists():
            raise FileNotFoundError(f"{folder / name} is missing: not a frozen-bottom states folder")
    tensors = read_safetensors(folder / STATES_FILE)
    info = read_json(folder / INFO_FILE)
    offsets = tensors["offsets"].numpy()
    if len(offsets) != info["documents"] + 1 or int(offsets[-1]) != tensors["states"].shape[0]:
        raise ValueError(f"{folder}: offsets do not match the stored states ({len(offsets) - 1} documents, "
                         f"{tensors['states'].shape[0]} token states; info says {info['documents']})")
    return BottomStates(info, tensors["states"], offsets)


def max_difference_from_model(model, bottom: BottomStates, indices: Sequence[int], input_ids: torch.Tensor,
                              mask: torch.Tensor) -> float:
    """Largest absolute difference between the stored states and the model's own bottom on one batch."""
    own = model.encode_bottom(input_ids, mask).float().cpu()
    stored = bottom.batch(indices, input_ids.shape[1])
    real = mask.bool().cpu().unsqueeze(-1)
    return float(((own - stored).abs() * real).max())
