"""Documents to nuggets: the trained encoder as a multi-vector text encoder (paper §3, eq. 4; §5 uses).

``encode_documents`` returns, per document, the nuggets Z = W^V X_selected (k = ceil(n·r) vectors in
token order), which source tokens were chosen, and their scores; for ``bottleneck: mean`` one vector.
``write_nugget_encodings`` stores them as the pipeline's encodings artifact (``multivec.encodings``).

Documents are encoded whole up to the encoder's position limit (``max_tokens`` None; §6.1 ranks
whole documents), not at the training length ``max_source_tokens``: the positions past it are
the pretrained encoder's own, in the frozen bottom. A longer ``max_tokens`` than the limit is
refused, and the artifact's ``info.json`` records how many documents and tokens were still cut.
``bf16`` encodes under bfloat16 autocast (see ``multivec.baselines.base_encoder.autocast``).
``describe_encoder`` says which model produced an encoding (the artifact's ``info.json``).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch
from tqdm import tqdm

from multivec.baselines.base_encoder import autocast, length_sorted_batches, tokenize_documents
from multivec.encodings import encoder_token_limit, write_encodings
from multivec.nugget.frozen_bottom import CHECK_TOLERANCE, BottomStates, max_difference_from_model
from multivec.nugget.modeling import NuggetModel
from multivec.training.batching import pad_sequences

log = logging.getLogger(__name__)


@dataclass
class EncodedDocument:
    vectors: np.ndarray  # k × d float32
    nugget_indices: list[int] | None  # source token positions (None for the mean bottleneck)
    nugget_tokens: list[str] | None  # the source tokens at those positions
    scores: list[float] | None  # scorer outputs of the chosen tokens (None without a learned scorer)
    n_tokens: int  # source tokens after truncation, special tokens included

    def row(self) -> dict[str, Any]:
        """The fields this document adds to ``documents.jsonl``."""
        row: dict[str, Any] = {"n_tokens": self.n_tokens}
        if self.nugget_indices is not None:
            row.update(nugget_indices=self.nugget_indices, nugget_tokens=self.nugget_tokens, scores=self.scores)
        return row


def encode_documents(model: NuggetModel, texts: Sequence[str], batch_size: int = 32,
                     max_tokens: int | None = None, bf16: bool = False,
                     tokenized_out: list | None = None, bottom: BottomStates | None = None,
                     sentence_ends: Sequence[Sequence[int]] | None = None) -> list[EncodedDocument]:
    """Encode ``texts`` (truncated to ``max_tokens`` source tokens; None: the encoder's position limit)
    in length-sorted batches.

    Puts the model in eval mode; results come back in the order of ``texts``. The tokenised corpus
    (with its truncation counts) is appended to ``tokenized_out`` when given. ``bottom``: the frozen
    bottom's states of these texts (``frozen_bottom.py``), so only the model's top runs; they are
    checked against the model's settings, the token ids and, on the first batch, its own bottom.
    ``sentence_ends``: per text, the character offsets where its sentences end (the sentence-boundary
    selector of Table 4 needs them; other models ignore them).
    """
    model.eval()
    processor = model.processor
    tokenized = tokenize_documents(processor.source_tokenizer, texts, max_tokens,
                                   encoder_token_limit(model.backbone_config))
    if tokenized_out is not None:
        tokenized_out.append(tokenized)
    if not texts:
        return []
    sources = tokenized.input_ids
    end_masks = None
    if model.rule_selector is not None and model.rule_selector.kind == "sentence_boundary":
        if sentence_ends is None:
            raise ValueError("the sentence-boundary selector needs each text's sentence_ends to encode it")
        end_masks = processor.sentence_end_masks(texts, sentence_ends, tokenized.max_tokens)
        if [len(m) for m in end_masks] != [len(s) for s in sources]:
            raise ValueError("sentence-end masks and token ids disagree in length (another tokenization?)")
    if bottom is not None:
        bottom.check_compatible(model, tokenized.max_tokens, sources)
    results: list[EncodedDocument | None] = [None] * len(sources)
    device = model.device
    with torch.inference_mode(), autocast(device, bf16):
        for number, chunk in enumerate(tqdm(length_sorted_batches([len(s) for s in sources], batch_size),
                                            desc="encoding", unit="batch")):
            chunk = chunk.tolist()
            ids, mask = processor.collate_sources([sources[i] for i in chunk], device)
            states = None
            if bottom is not None:
                if number == 0:
                    gap = max_difference_from_model(model, bottom, chunk, ids.to(device), mask.to(device))
                    if gap > CHECK_TOLERANCE:
                        raise ValueError(f"stored frozen-bottom states differ from this model's bottom by {gap:.2e} "
                                         f"(> {CHECK_TOLERANCE}): were they computed from another encoder?")
                states = bottom.batch(chunk, ids.shape[1]).to(device)
            end_mask = None if end_masks is None else pad_sequences([end_masks[i] for i in chunk], 0, device)[0]
            nuggets = model.encode(ids.to(device), mask.to(device), sentence_end_mask=end_mask, bottom_states=states)
            vectors = nuggets.vectors.float().cpu().numpy()
            counts = nuggets.mask.sum(dim=1).tolist()
            for row, doc in enumerate(chunk):
                k = counts[row]
                indices = tokens = scores = None
                if nuggets.indices is not None:
                    indices = nuggets.indices[row, :k].tolist()
                    tokens = processor.source_tokenizer.convert_ids_to_tokens([sources[doc][i] for i in indices])
                if nuggets.scores is not None:
                    scores = [round(float(s), 5) for s in nuggets.scores[row, :k].tolist()]
                results[doc] = EncodedDocument(vectors[row, :k].copy(), indices, tokens, scores, len(sources[doc]))
    return results  # type: ignore[return-value]


def describe_encoder(model: NuggetModel) -> dict:
    """What produced an encoding (for info.json)."""
    name = {"nuggets": "nugget", "mean": "tsdae", "tokens": "seq2seq"}[model.config.bottleneck]
    return {"encoder": name, "nugget_config": model.config.to_dict(), "dimension": model.encoder.hidden_size}


def write_nugget_encodings(out_dir: str | os.PathLike, ids: Sequence[str], texts: Sequence[str], model: NuggetModel,
                           batch_size: int = 32, info: dict[str, Any] | None = None, max_tokens: int | None = None,
                           bf16: bool = False, bottom: BottomStates | None = None,
                           sentence_ends: Sequence[Sequence[int]] | None = None) -> None:
    """Encode and write the encodings artifact (vectors, per-document nugget positions/tokens/scores, info).
    ``bottom``: shared frozen-bottom states of these texts (see ``encode_documents``)."""
    if len(ids) != len(texts):
        raise ValueError(f"{len(ids)} ids but {len(texts)} texts")
    if bottom is not None and bottom.info.get("ids") != list(ids):
        raise ValueError("stored frozen-bottom states list other document ids (or another order)")
    tokenized: list = []
    documents = encode_documents(model, texts, batch_size, max_tokens, bf16, tokenized, bottom, sentence_ends)
    truncation = tokenized[0].truncation()
    log.info("%d of %d documents truncated at %d tokens (%.2f%% of tokens lost)", truncation["truncated_documents"],
             truncation["documents"], truncation["max_tokens"], 100 * truncation["tokens_lost_share"])
    meta = {**describe_encoder(model), "max_tokens": truncation["max_tokens"], "bf16": bf16, "truncation": truncation,
            "shared_frozen_bottom": bottom is not None,
            **(info or {})}
    write_encodings(out_dir, ids, [d.vectors for d in documents], [d.row() for d in documents], meta)
