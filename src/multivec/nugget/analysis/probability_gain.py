"""What each nugget encodes: the probability gain of eq. 9 (Qin & Van Durme 2023, §5.3, Figs. 7, 8, 11, App. C).

Teacher-forced decoding of a document by the autoencoding model with ONE nugget exposed:

    g_i^j = p(y_i | y_<i, z_j) - p(y_i | y_<i)                                  (eq. 9)

- ``p(y_i | y_<i, z_j)``: the decoder's memory is the single nugget z_j, with its residual score
  bias (eq. 5) as in training (with one memory slot the softmax gives it weight 1 whatever the bias).
- ``p(y_i | y_<i)`` (the paper leaves it open): the decoder cannot read an empty memory, so "no
  nugget" is ONE all-zero memory slot with zero bias (``null_memory``): cross-attention then adds
  only its value/output biases, the same for every position and document (docs/nugget.md).
  A masked-out (padding) nugget slot is exposed as that null memory, so its gain is exactly 0.

All k exposures of a document (and the null one) are k + 1 rows of one decoder pass.
Nuggets are ordered by the index of their token in the document (Figs. 7, 11: "the j-th nugget");
token positions are those of the decoder's target sequence (prefix + tokens + eos), to which the
nugget's source token is mapped through character offsets (at demo scale the decoder's BPE and
the encoder's WordPiece differ; at paper scale both are mBART's and the map is the identity).
This module computes the gains with the model and writes them (``save_gains``); reading them back, the
averages, their CIs and the figures are in ``multivec.nugget.analysis.gain_tables`` (numpy only, so the
light rules that build Figs. 7, 8 and 11 do not load torch), and the distance bins of Figs. 7 and 8 with
their per-document measurements, tests and claims in ``multivec.nugget.analysis.gain_bins``.
"""

from __future__ import annotations

import random
from bisect import bisect_left
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from multivec.data.wikitext import Article
from multivec.nugget.analysis.gain_tables import GAIN_TENSORS
from multivec.nugget.modeling import IGNORE_INDEX, Nuggets


# ---------------------------------------------------------------- documents

def word_windows(articles: Sequence[Article], counts: dict[int, int], seed: int) -> list[dict]:
    """Documents ``{id, text, length}`` (id ``len<L>/<article position> <title>/<first word>``): for each length L in ``counts``, ``counts[L]`` windows of L
    consecutive words of one article (``articles`` as ``read_wikitext`` gives them: real text, ``<unk>``
    as the encoder tokenizer's one unknown token; non-overlapping within a length), drawn without
    replacement with ``seed`` (all of them when fewer exist).

    A target sequence of L tokens is cut from each window later (``prepare_document``): L words
    give at least L subword tokens for the tokenizers used here, and shorter ones are dropped there.
    """
    rows = []
    for length, per_length in counts.items():
        if length < 4:
            raise ValueError(f"probability_gain: document length {length} is too short (>= 4 tokens)")
        windows = []
        for number, article in enumerate(articles):
            words = " ".join(s.text for s in article.sections).split()
            # The article's position keeps ids unique: WikiText titles repeat (out-of-vocabulary ones are <unk>).
            name = f"{number:05d} {article.title}"
            for start in range(0, len(words) - length + 1, length):
                windows.append((name, start, " ".join(words[start:start + length])))
        if not windows:
            raise ValueError(f"probability_gain: no article has {length} words")
        chosen = random.Random(f"{seed}-{length}").sample(range(len(windows)), min(per_length, len(windows)))
        for index in sorted(chosen):
            title, start, text = windows[index]
            rows.append({"id": f"len{length}/{title}/{start}", "text": text, "length": length})
    return rows


@dataclass
class PreparedDocument:
    target_ids: list[int]  # prefix + L - len(prefix) - 1 tokens + eos: exactly L tokens
    source_ids: list[int]
    source_to_target: list[int]  # per source token, the target position holding its last character


def _target_pieces(tokenizer, text: str) -> tuple[list[int], list[tuple[int, int]]]:
    """Content token ids (no prefix, no eos) and their character spans."""
    if tokenizer.kind == "bpe":
        encoding = tokenizer.backend.encode(text, add_special_tokens=False)
        return list(encoding.ids), [tuple(o) for o in encoding.offsets]
    encoded = tokenizer.backend(text, add_special_tokens=False, return_offsets_mapping=True)
    return list(encoded["input_ids"]), [tuple(o) for o in encoded["offset_mapping"]]


def map_source_to_target(source_offsets: Sequence[tuple[int, int]], special: Sequence[int],
                         target_ends: Sequence[int], prefix_length: int, target_length: int) -> list[int]:
    """Target position of each source token: the target token covering the source token's last
    character. Special tokens map to the start (position 0) or, after any content, to the eos."""
    positions, seen_content = [], False
    content = target_length - prefix_length - 1
    for (start, end), is_special in zip(source_offsets, special):
        if is_special or end <= start:
            positions.append(target_length - 1 if seen_content else 0)
            continue
        seen_content = True
        positions.append(prefix_length + min(bisect_left(target_ends, end), content - 1))
    return positions


def prepare_document(model, text: str, length: int) -> PreparedDocument | None:
    """The first ``length`` target tokens of ``text`` (prefix and eos included) and the source
    tokens of the same text span; None when the text has fewer tokens."""
    tok = model.processor.target_tokenizer
    content = length - len(tok.prefix_ids) - 1
    ids, offsets = _target_pieces(tok, text)
    if content < 1 or len(ids) < content:
        return None
    text = text[: offsets[content - 1][1]]
    target = list(tok.prefix_ids) + ids[:content] + [tok.eos_id]
    max_length = getattr(model.backbone_config, "max_position_embeddings", 512)
    encoded = model.processor.source_tokenizer(text, truncation=True, max_length=max_length, add_special_tokens=True,
                                     return_offsets_mapping=True, return_special_tokens_mask=True)
    mapping = map_source_to_target(encoded["offset_mapping"], encoded["special_tokens_mask"],
                                   [end for _, end in offsets[:content]], len(tok.prefix_ids), length)
    return PreparedDocument(target, list(encoded["input_ids"]), mapping)


# ---------------------------------------------------------------- eq. 9

def order_by_token_index(indices: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Permutation of one document's nugget slots: real nuggets by ascending token index, padding last."""
    key = torch.where(mask, indices, torch.iinfo(torch.long).max)
    return torch.sort(key, stable=True).indices


def null_memory(width: int, dtype: torch.dtype, device) -> tuple[torch.Tensor, torch.Tensor]:
    """"No nugget": one all-zero memory slot (1 × 1 × d) with zero bias (1 × 1 × 1 × 1)."""
    return (torch.zeros(1, 1, width, dtype=dtype, device=device),
            torch.zeros(1, 1, 1, 1, dtype=dtype, device=device))


def exposures(vectors: torch.Tensor, bias: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Memories of one document's k single-nugget exposures plus the null one, as k + 1 rows.

    ``vectors`` k × d, ``bias`` k (the residual bias of each slot), ``mask`` k. Row j exposes
    nugget j alone; a masked-out slot and the last row are the null memory. Returns memory
    (k+1) × 1 × d and bias (k+1) × 1 × 1 × 1.
    """
    zero_memory, zero_bias = null_memory(vectors.shape[-1], vectors.dtype, vectors.device)
    keep = mask[:, None]
    memory = torch.cat([torch.where(keep, vectors, zero_memory[0]), zero_memory[0]])[:, None, :]
    biases = torch.cat([torch.where(mask, bias, zero_bias.reshape(1)), zero_bias.reshape(1)])
    return memory, biases.reshape(-1, 1, 1, 1).to(bias.dtype)


@dataclass
class DocumentGains:
    gains: np.ndarray  # k × L: g_i^j (NaN where nothing is predicted: the target prefix)
    positions: np.ndarray  # k target positions of the nuggets' tokens, ascending
    source_indices: np.ndarray  # k source token indices of the nuggets


@torch.no_grad()
def exposure_gains(model, target_ids: Sequence[int], vectors: torch.Tensor, bias: torch.Tensor,
                   mask: torch.Tensor) -> torch.Tensor:
    """g_i^j (eq. 9) for the k slots of one document (k × L; NaN where nothing is predicted).

    ``vectors`` k × d, ``bias`` k (residual bias of each slot, as ``memory_bias`` gives it), ``mask`` k.
    """
    memory, memory_bias = exposures(vectors, bias, mask)
    rows = memory.shape[0]
    decoder_input_ids, labels = model.processor.target_batch([list(target_ids)], model.device)
    hidden, _ = model.decoder(decoder_input_ids.expand(rows, -1), memory, memory_bias)
    log_probs = torch.log_softmax(model.decoder.logits(hidden).float(), dim=-1)
    probs = log_probs.gather(-1, labels.clamp(min=0).expand(rows, -1).unsqueeze(-1)).squeeze(-1).exp()
    null = probs[-1:]
    # A masked slot reads the null row itself, so its gain is exactly 0 (not merely close).
    gains = torch.where(mask[:, None], probs[:-1], null) - null
    return gains.masked_fill((labels[0] == IGNORE_INDEX)[None], float("nan"))


@torch.no_grad()
def document_gains(model, document: PreparedDocument, memory_positions: bool = True) -> DocumentGains:
    """Eq. 9 for every nugget of one document, nuggets ordered by their token index. ``memory_positions=False``
    exposes each nugget by its vector alone, without the position term a ``decoder_memory_positions`` model adds
    to its memory (``NuggetModel.decoder_memory``): how much of the gain that position channel carries."""
    ids, mask = model.processor.collate_sources([document.source_ids], model.device)
    nuggets: Nuggets = model.encode(ids, mask)
    if nuggets.indices is None:
        raise ValueError("probability gain needs a nugget model (bottleneck: nuggets), not the mean bottleneck")
    order = order_by_token_index(nuggets.indices[0], nuggets.mask[0])
    slot_mask = nuggets.mask[0][order]
    bias = model.memory_bias(nuggets)[0, 0, 0][order]
    memory = model.decoder_memory(nuggets) if memory_positions else nuggets.vectors
    gains = exposure_gains(model, document.target_ids, memory[0][order], bias, slot_mask)
    real = slot_mask.nonzero().squeeze(-1)
    source_indices = nuggets.indices[0][order][real].cpu().numpy()
    positions = np.array([document.source_to_target[i] for i in source_indices], dtype=np.int64)
    return DocumentGains(gains[real].cpu().numpy().astype(np.float32), positions, source_indices)


# ---------------------------------------------------------------- averages

def stack_gains(documents: Sequence[DocumentGains], length: int) -> tuple[np.ndarray, np.ndarray]:
    """Pad to D × k_max × L gains (NaN) and D × k_max positions (-1)."""
    k_max = max((len(d.positions) for d in documents), default=0)
    gains = np.full((len(documents), k_max, length), np.nan, dtype=np.float32)
    positions = np.full((len(documents), k_max), -1, dtype=np.int64)
    for row, doc in enumerate(documents):
        k = len(doc.positions)
        gains[row, :k] = doc.gains
        positions[row, :k] = doc.positions
    return gains, positions


# ---------------------------------------------------------------- the artifact

def save_gains(path, documents: Sequence[DocumentGains], prepared: Sequence[PreparedDocument],
               doc_ids: Sequence[str], length: int) -> None:
    """One length's raw gains: D × k_max × L ``gains`` (NaN pad), ``positions`` and ``source_indices``
    (D × k_max, -1 pad), ``target_ids`` (D × L); document ids and L in the metadata."""
    import json

    from safetensors.numpy import save_file

    gains, positions = stack_gains(documents, length)
    source_indices = np.full_like(positions, -1)
    for row, doc in enumerate(documents):
        source_indices[row, : len(doc.source_indices)] = doc.source_indices
    target_ids = np.array([p.target_ids for p in prepared], dtype=np.int64).reshape(len(prepared), length)
    # GAIN_TENSORS (gain_tables) names the file's tensors for both sides: this writer and load_gains
    tensors = dict(zip(GAIN_TENSORS, (gains, positions, source_indices, target_ids), strict=True))
    save_file(tensors, str(path), metadata={"length": str(length), "doc_ids": json.dumps(list(doc_ids))})
