"""Conditional STS with the sub-sentence encoder (Chen et al. 2023 §4.2.2, Table 3): an LLM picks, in each
sentence on its own, the words that correspond to the condition; the SubEncoder encodes those words in the
context of their sentence (one mask per sentence); the prediction is the cosine of the two vectors; the
score is Spearman's r ×100 against the human ratings.

The LLM is any ``complete(prompt) -> str`` callable (at paper scale the project's cached chat client).
The paper does not print its prompt; ``WORD_PROMPT`` is ours. The reply is a comma-separated list of words
or phrases; each is located in the sentence (case-insensitively, left to right). A side with no word found
is encoded as the whole sentence and counted (``fallback_whole_sentence``).

C-STS (Deshpande et al. 2023) is distributed under its own access terms; rows are JSONL
``{"sentence1", "sentence2", "condition", "label"}``.
"""

from __future__ import annotations

import os
import re
from typing import Any, Callable, Sequence

import torch

from multivec.io import MalformedInputError, read_jsonl
from multivec.subencoder.model import SubEncoder

WORD_PROMPT = ("Sentence: {sentence}\nCondition: {condition}\n"
               "List the words of the sentence that express the condition, copied exactly, separated by commas. "
               "Answer with the words only.")


def read_csts(path: str | os.PathLike) -> list[dict[str, Any]]:
    rows = read_jsonl(path)
    if not rows:
        raise MalformedInputError(path, None, "no rows")
    for number, row in enumerate(rows, start=1):
        for key in ("sentence1", "sentence2", "condition"):
            if not isinstance(row.get(key), str) or not row[key].strip():
                raise MalformedInputError(path, number, f"key {key!r} missing or empty")
        if not isinstance(row.get("label"), (int, float)) or isinstance(row.get("label"), bool):
            raise MalformedInputError(path, number, "key 'label' missing or not a number")
    return rows


def word_spans(sentence: str, reply: str) -> list[list[int]]:
    """Character spans of the reply's comma-separated words/phrases in ``sentence`` (left to right)."""
    spans, lowered, position = [], sentence.lower(), 0
    for phrase in (p.strip().strip('"\'.') for p in reply.split(",")):
        if not phrase:
            continue
        match = re.compile(re.escape(phrase.lower())).search(lowered, position) or \
            re.compile(re.escape(phrase.lower())).search(lowered)
        if match:
            spans.append([match.start(), match.end()])
            position = match.end()
    return spans


def csts_predictions(model: SubEncoder, rows: Sequence[dict[str, Any]], complete: Callable[[str], str],
                     batch_size: int = 32) -> tuple[list[float], dict[str, int]]:
    """Cosine of the two condition-word encodings per row, and counts (LLM calls, whole-sentence fallbacks)."""
    sentences, spans, fallbacks = [], [], 0
    for row in rows:
        for side in ("sentence1", "sentence2"):
            sentence = row[side]
            found = word_spans(sentence, complete(WORD_PROMPT.format(sentence=sentence, condition=row["condition"])))
            if not found:
                fallbacks += 1
                found = [[0, len(sentence)]]
            sentences.append(sentence)
            spans.append([found])
    encoded, masks = model.span_masks(sentences, spans, max_tokens=model.position_limit)
    vectors = model.encode(sentences, masks, batch_size=batch_size, input_ids=encoded["input_ids"])
    cosine = torch.nn.functional.cosine_similarity(vectors[0::2], vectors[1::2], dim=-1)
    return cosine.tolist(), {"rows": len(rows), "llm_calls": 2 * len(rows), "fallback_whole_sentence": fallbacks}


def spearman_x100(predictions: Sequence[float], labels: Sequence[float]) -> float:
    from scipy.stats import spearmanr

    if len(predictions) != len(labels) or len(labels) < 2:
        raise ValueError(f"Spearman needs two equally long lists of >= 2 values ({len(predictions)}, {len(labels)})")
    return float(100 * spearmanr(predictions, labels).statistic)
