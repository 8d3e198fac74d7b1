"""The student of Burian (2023, §3.1, §4.1): a long-input transformer, mean-pooled, no global attention.

Paper scale: ``allenai/longformer-base-4096`` reads up to 4096 tokens in one window (``chunk_tokens: null``),
with sliding-window attention only (no global attention) and mean pooling over every token state.
Demo scale (no Longformer weights offline): all-MiniLM-L6-v2 over chunks: a document's first ``max_tokens``
content tokens are cut into pieces of ``chunk_tokens - 2``, each piece is encoded as its own sequence
([CLS] piece [SEP]), and the document's embedding is the mean of all its chunks' token states, special
tokens included (MiniLM's own mean pooling, extended across chunks). Its limit: no attention crosses a chunk
boundary, so context longer than a chunk reaches the embedding only through the pooling.

The pooled state is the student's embedding (thesis §3.3: the mean of the final hidden states; the authors'
``pooler_type: mean``): every student row of the tables scores it, trained or not; the projection heads of
``multivec.distill.training`` exist only for the losses. ``embed_texts`` gives the pooled embeddings ([N, hidden])
in length-sorted batches; gradient checkpointing is the backbone's switch (``gradient_checkpointing: true``);
``freeze_backbone: true`` trains the heads alone (the sanity row, whose embedding must equal the untrained one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

from multivec.distill.configuration import StudentConfig
from multivec.training.batching import pad_sequences


@dataclass
class ChunkBatch:
    input_ids: torch.Tensor  # [chunks, length]
    attention_mask: torch.Tensor  # [chunks, length]
    document: torch.Tensor  # [chunks]: which document of the batch each chunk belongs to
    n_documents: int

    def to(self, device) -> "ChunkBatch":
        return ChunkBatch(self.input_ids.to(device), self.attention_mask.to(device), self.document.to(device),
                          self.n_documents)


class Student(nn.Module):
    """Backbone + mean pooling across chunks (``forward(batch) -> [B, hidden]``)."""

    def __init__(self, config: StudentConfig):
        super().__init__()
        from multivec.baselines.base_encoder import load_encoder

        self.config = config
        self.tokenizer, backbone = load_encoder(config.backbone, seed=config.seed)
        self.tokenizer.model_max_length = 10**9  # documents are cut at max_tokens here, not by the tokenizer
        self.backbone = backbone.train()
        if config.freeze_backbone:
            self.backbone.requires_grad_(False)
        if config.gradient_checkpointing and not config.freeze_backbone:
            self.backbone.gradient_checkpointing_enable()
        self.hidden_size = int(self.backbone.config.hidden_size)
        window = config.chunk_tokens or (config.max_tokens + 2)
        limit = getattr(self.backbone.config, "max_position_embeddings", None)
        if limit is not None and window > limit:
            raise ValueError(f"distill.student: a window of {window} tokens exceeds {config.backbone}'s "
                             f"{limit} positions; lower chunk_tokens (or max_tokens when chunk_tokens is null)")
        import inspect

        self._accepted = set(inspect.signature(self.backbone.forward).parameters)
        # The tokenizer's own specials around an empty text: [CLS] [SEP] (BERT), <s> </s> (RoBERTa, Longformer).
        empty = self.tokenizer("", add_special_tokens=True)["input_ids"]
        self._prefix, self._suffix = list(empty[:1]), list(empty[1:])

    # -- tokens ------------------------------------------------------------------------------------
    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Content token ids (no specials) of each text, cut at ``max_tokens``."""
        ids = self.tokenizer(list(texts), add_special_tokens=False, truncation=False)["input_ids"]
        return [row[: self.config.max_tokens] for row in ids]

    def chunks(self, ids: Sequence[int]) -> list[list[int]]:
        return chunk_ids(ids, self.config.chunk_tokens, self._prefix, self._suffix)

    def collate(self, documents: Sequence[Sequence[int]]) -> ChunkBatch:
        input_ids, mask, owner = pad_chunks(documents, self.chunks, self.tokenizer.pad_token_id or 0)
        return ChunkBatch(input_ids, mask, owner, len(documents))

    # -- encoding ----------------------------------------------------------------------------------
    def forward(self, batch: ChunkBatch) -> torch.Tensor:
        inputs = {"input_ids": batch.input_ids, "attention_mask": batch.attention_mask}
        if "global_attention_mask" in self._accepted:  # Longformer: no global attention (the thesis's choice)
            inputs["global_attention_mask"] = torch.zeros_like(batch.attention_mask)
        if self.config.freeze_backbone:  # frozen: no dropout, no graph (the untrained student's embedding)
            self.backbone.eval()
            with torch.no_grad():
                states = self.backbone(**inputs).last_hidden_state
        else:
            states = self.backbone(**inputs).last_hidden_state  # [chunks, length, hidden]
        weights = batch.attention_mask.unsqueeze(-1).to(states.dtype)
        chunk_sums = (states * weights).sum(dim=1)  # [chunks, hidden]
        chunk_counts = weights.sum(dim=1)  # [chunks, 1]
        sums = torch.zeros(batch.n_documents, states.shape[-1], dtype=states.dtype, device=states.device)
        counts = torch.zeros(batch.n_documents, 1, dtype=states.dtype, device=states.device)
        sums = sums.index_add(0, batch.document, chunk_sums)
        counts = counts.index_add(0, batch.document, chunk_counts)
        return sums / counts.clamp_min(1.0)

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device


def length_sorted_order(lengths: Sequence[int]) -> list[int]:
    return sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))


def embed_texts(student: Student, texts: Sequence[str], batch_size: int, show_progress: bool = False) -> np.ndarray:
    """The student's embeddings of ``texts`` (the pooled state, [N, hidden] float32, input order), in batches of
    similar length, with no weight requiring grad (so a frozen and an unfrozen student with the same backbone
    weights give bit-identical embeddings; their requires_grad flags are restored after)."""
    from tqdm.auto import tqdm

    tokens = student.tokenize(texts)
    order = length_sorted_order([len(t) for t in tokens])
    out = np.zeros((len(texts), student.hidden_size), dtype=np.float32)
    if not len(texts):
        raise ValueError("embed_texts: no texts")
    was_training = student.training
    requires_grad = [p.requires_grad for p in student.parameters()]
    # One numeric path for every student: PyTorch's matmul picks its kernel by whether a weight requires grad
    # (even in inference mode), and a Longformer batch of padded documents then rounds differently (up to
    # 1.2e-7), so a frozen student (weights without grad) did not embed exactly as the untrained one.
    student.eval()
    student.requires_grad_(False)
    try:
        with torch.inference_mode():
            for start in tqdm(range(0, len(order), batch_size), desc="embed", disable=not show_progress):
                rows = order[start:start + batch_size]
                batch = student.collate([tokens[i] for i in rows]).to(student.device)
                out[rows] = student(batch).float().cpu().numpy()
    finally:
        for parameter, flag in zip(student.parameters(), requires_grad):
            parameter.requires_grad_(flag)
        student.train(was_training)
    return out


def length_report(student: Student, texts: Sequence[str], limits: dict[str, int]) -> dict[str, Any]:
    """How many of ``texts`` are longer than each named limit (content tokens of the student's tokenizer, cut
    at no length) and than the student's own ``max_tokens`` (those are truncated): counts and shares."""
    lengths = [len(ids) for ids in student.tokenizer(list(texts), add_special_tokens=False,
                                                     truncation=False)["input_ids"]]
    n = max(1, len(lengths))
    report: dict[str, Any] = {"documents": len(lengths), "max_length": max(lengths, default=0),
                              "student_max_tokens": student.config.max_tokens,
                              "truncated": sum(length > student.config.max_tokens for length in lengths)}
    report["truncated_share"] = round(report["truncated"] / n, 4)
    for name, limit in limits.items():
        longer = sum(length > limit for length in lengths)
        report[f"longer_than_{name}"] = longer
        report[f"longer_than_{name}_share"] = round(longer / n, 4)
    return report


def chunk_ids(ids: Sequence[int], chunk_tokens: int | None, prefix: list[int], suffix: list[int]) -> list[list[int]]:
    """A document's content ids cut into windows of ``chunk_tokens`` (specials included; None: one window), each
    between the tokenizer's specials (also used by the exported student, multivec.interop.chunked_student)."""
    piece = (chunk_tokens - 2) if chunk_tokens else max(1, len(ids))
    pieces = [ids[i:i + piece] for i in range(0, len(ids), piece)] or [[]]
    return [prefix + list(p) + suffix for p in pieces]


def pad_chunks(documents: Sequence[Sequence[int]], chunks, pad: int):
    """(input ids, attention mask, owning document of each chunk) of every document's ``chunks(ids)``, padded
    right with ``pad`` to the longest chunk."""
    sequences, owner = [], []
    for index, ids in enumerate(documents):
        for chunk in chunks(ids):
            sequences.append(chunk)
            owner.append(index)
    input_ids, mask = pad_sequences(sequences, pad, "cpu")
    return input_ids, mask, torch.tensor(owner, dtype=torch.long)
