"""Positive proposition pairs by bidirectional entailment (Chen et al. 2023, §3.3 step 2).

One interface, ``PairJudge.positive(pairs) -> [bool]``: a cross-sentence proposition pair
``(a, b)`` is positive when a entails b and b entails a.

- ``TransformersNLI`` (paper): an NLI cross-encoder through transformers
  (``ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli``), both directions in one batch,
  entailment = the argmax label named *entailment* in the model's ``id2label``.
- ``SimilarityProxy`` (**demo stand-in**, no NLI model offline): both propositions' base-encoder
  embeddings have cosine >= ``threshold`` AND their content-word forms (App. A.3 forms, stop
  words dropped) overlap with Jaccard >= ``min_overlap`` -- a symmetric test, so "both
  directions" holds by construction. Every artifact built with it says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

from multivec.subencoder.data.alignment import normalise, word_spans


class PairJudge(Protocol):
    name: str
    stand_in: bool

    def positive(self, pairs: Sequence[tuple[str, str]]) -> list[bool]: ...


@dataclass
class TransformersNLI:
    """Paper: an NLI model judges both directions; positive when both are entailment."""

    model: str = "ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli"
    batch_size: int = 64
    device: str | None = None
    stand_in: bool = False

    @property
    def name(self) -> str:
        return f"NLI {self.model}"

    def positive(self, pairs: Sequence[tuple[str, str]]) -> list[bool]:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from multivec.io.resources import default_device, resolve_model

        path = resolve_model(self.model)
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModelForSequenceClassification.from_pretrained(path).eval()
        device = self.device or default_device()
        model.to(device)
        labels = {str(v).lower(): int(k) for k, v in model.config.id2label.items()}
        if "entailment" not in labels:
            raise ValueError(f"NLI model {self.model!r} has no 'entailment' label in id2label {model.config.id2label}")
        entail = labels["entailment"]
        both = [(a, b) for a, b in pairs] + [(b, a) for a, b in pairs]
        verdicts: list[bool] = []
        with torch.no_grad():
            for start in range(0, len(both), self.batch_size):
                chunk = both[start:start + self.batch_size]
                batch = tokenizer([a for a, _ in chunk], [b for _, b in chunk], padding=True, truncation=True,
                                  return_tensors="pt").to(device)
                verdicts += (model(**batch).logits.argmax(-1) == entail).tolist()
        n = len(pairs)
        return [bool(verdicts[i] and verdicts[n + i]) for i in range(n)]


STOP_WORDS = frozenset(
    "a an the of in on at to for by with from and or but is are was were be been being has have had it its "
    "this that these those as which who whom whose he she they his her their him them also not".split())


def content_forms(text: str) -> frozenset[str]:
    """App. A.3 word forms of the content words (letters or digits, not a stop word)."""
    words = (text[a:b] for a, b in word_spans(text))
    return frozenset(normalise(w) for w in words if any(c.isalnum() for c in w) and w.lower() not in STOP_WORDS)


def content_jaccard(forms_a: frozenset[str], forms_b: frozenset[str]) -> float:
    """Jaccard overlap of two ``content_forms`` sets (0 when both are empty)."""
    union = forms_a | forms_b
    return len(forms_a & forms_b) / len(union) if union else 0.0


@dataclass
class SimilarityProxy:
    """Demo stand-in for the NLI model: cosine AND lexical overlap, both symmetric."""

    encoder: str = "minilm"
    threshold: float = 0.8
    min_overlap: float = 0.5
    batch_size: int = 64
    stand_in: bool = True

    @property
    def name(self) -> str:
        return (f"similarity proxy (demo stand-in for NLI): {self.encoder} cosine >= {self.threshold} "
                f"and content-word Jaccard >= {self.min_overlap}")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length mean-pooled base-encoder vectors (the project's one encoding path)."""
        from multivec.baselines.base_encoder import encode_mean_pooled

        vectors = encode_mean_pooled(self.encoder, list(texts), max_length=128, batch_size=self.batch_size,
                                     show_progress=False)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)

    def positive(self, pairs: Sequence[tuple[str, str]]) -> list[bool]:
        if not pairs:
            return []
        texts = sorted({t for pair in pairs for t in pair})
        index = {t: i for i, t in enumerate(texts)}
        vectors = self.embed(texts)
        forms = {t: content_forms(t) for t in texts}
        out = []
        for a, b in pairs:
            cosine = float(vectors[index[a]] @ vectors[index[b]])
            out.append(cosine >= self.threshold and content_jaccard(forms[a], forms[b]) >= self.min_overlap)
        return out


def judge_from_config(settings: dict) -> PairJudge:
    """``subencoder.nli``: kind ``proxy`` (demo stand-in) or ``transformers`` (paper)."""
    kind = settings.get("kind")
    if kind == "proxy":
        return SimilarityProxy(encoder=settings.get("encoder", "minilm"), threshold=float(settings["threshold"]),
                               min_overlap=float(settings["min_overlap"]))
    if kind == "transformers":
        return TransformersNLI(model=settings["model"], batch_size=int(settings.get("batch_size", 64)))
    raise ValueError(f"config subencoder.nli.kind {kind!r}: expected 'proxy' or 'transformers'")
