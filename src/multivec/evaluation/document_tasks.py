"""The document tasks every representation can be scored on, shared by the works: Lee similarity and polarity.

- **Lee** (Lee, Pincombe & Welsh 2005; the distillation thesis's §5 demo task): the Pearson and Spearman
  correlation between a representation's similarity of each pair of the 50 documents (the 1,225 pairs of the
  upper triangle) and the mean human rating of that pair. The unit is the document pair ``"a|b"`` (statistics
  ``pearson``, ``spearman``: ``multivec.statistics`` resamples documents and keeps the pairs among them).
- **Polarity** (movie-review sentences): accuracy x 100 of a logistic regression on each sentence's fixed
  feature vector (standardised inputs), each sentence predicted by the model of the stratified 5-fold
  cross-validation (a fixed fold seed) that did not train on it. The unit is the sentence.

Single-vector representations (mean pooling, TSDAE, the distilled students and teachers) use their vector:
cosine for Lee, the vector itself for polarity. Multi-vector representations (NUGGET's nuggets, ColBART's
token states, token pooling) use:

- for Lee, the **symmetric MaxSim-mean** ½ (m(a, b) + m(b, a)) with m of NUGGET's eq. 10
  (``multivec.metrics.maxsim``): eq. 10 scores a query against a candidate, and a pair of Lee documents has
  no query side, so both directions are averaged (the similarity is then symmetric, as the ratings are);
- for polarity, the **mean of the document's vectors**: a linear classifier needs one vector per input, and
  the mean is what mean pooling does to token states (none of the three works evaluates a multi-vector
  representation on polarity: this is how the representation matrix's multi-vector rows reach the task).

``lee_units(similarities, ratings, ids)`` and ``polarity_units(features, labels, ids)`` give ``UnitScores``
per metric; ``representation_units(task, vectors_by_id, multi_vector, gold)`` scores a representation's vectors
(e.g. an encodings folder's, what NUGGET's Table 2 rows write) on a task's gold folder (the distillation work's
``eval_<task>/``, read by ``multivec.data.document_task_gold``). PropSegment for a text encoder is
``multivec.interop.propsegment_beir.propsegment_units``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence

import numpy as np

POLARITY_FOLDS = 5
FOLD_SEED = 0
METRICS = {"lee": ("lee_pearson", "lee_spearman"), "polarity": ("polarity_accuracy",)}


@dataclass
class UnitScores:
    """One metric of one representation per evaluation unit: ``statistic`` (a name of
    ``multivec.statistics.STATISTICS``), ``units`` (ids) and ``values`` ((n,) or (n, components))."""

    statistic: str
    units: list[str]
    values: np.ndarray

    def value(self) -> float:
        from multivec.statistics import compute_statistic

        return float(compute_statistic(self.statistic, self.values))


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Each row scaled to length 1 (a zero row stays zero: cosine 0 with everything), in the vectors' own
    dtype (the float32 of an embeddings file: the committed scores were computed so)."""
    vectors = np.asarray(vectors)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def cosine_similarities(vectors: np.ndarray) -> np.ndarray:
    """(n, n) cosine of every pair of single vectors (n, d)."""
    unit = unit_rows(vectors)
    return unit @ unit.T


def symmetric_maxsim_similarities(vector_sets: Sequence[np.ndarray]) -> np.ndarray:
    """(n, n) symmetric MaxSim-mean ½ (m(a, b) + m(b, a)) of every pair of vector sets (module docstring)."""
    import torch

    from multivec.metrics.maxsim import maxsim_mean, pad_vector_sets

    if len(vector_sets) == 0:
        raise ValueError("no documents to compare")
    padded, mask = pad_vector_sets([np.asarray(v, dtype=np.float32) for v in vector_sets])
    n = len(vector_sets)
    with torch.no_grad():
        directed = torch.stack([maxsim_mean(padded[i:i + 1].unsqueeze(1), mask[i:i + 1].unsqueeze(1),
                                            padded.unsqueeze(0), mask.unsqueeze(0)).reshape(n)
                                for i in range(n)]).double().numpy()  # directed[i, j] = m(i, j)
    return (directed + directed.T) / 2


def lee_units(similarities: np.ndarray, ratings: np.ndarray, ids: Sequence[str]) -> dict[str, UnitScores]:
    """Lee per document pair (i < j): its similarity and its human rating; Pearson and Spearman over the pairs."""
    similarities, ratings = np.asarray(similarities, dtype=np.float64), np.asarray(ratings, dtype=np.float64)
    if similarities.shape != ratings.shape or similarities.shape != (len(ids), len(ids)):
        raise ValueError(f"Lee: similarities {similarities.shape} and ratings {ratings.shape} must both be "
                         f"({len(ids)}, {len(ids)}), one row per document")
    i, j = np.triu_indices(len(ids), k=1)
    pairs = [f"{ids[a]}|{ids[b]}" for a, b in zip(i, j)]
    values = np.stack([similarities[i, j], ratings[i, j]], axis=1)
    return {"lee_pearson": UnitScores("pearson", pairs, values), "lee_spearman": UnitScores("spearman", pairs, values)}


def polarity_predictions(features: np.ndarray, labels: np.ndarray, folds: int = POLARITY_FOLDS) -> np.ndarray:
    """Each sentence's out-of-fold prediction: a logistic regression (standardised inputs) trained on the
    other folds of a stratified ``folds``-fold split with a fixed fold seed."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    classifier = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    splits = StratifiedKFold(n_splits=folds, shuffle=True, random_state=FOLD_SEED)
    return cross_val_predict(classifier, features, labels, cv=splits)


def polarity_units(features: np.ndarray, labels: np.ndarray, ids: Sequence[str],
                   folds: int = POLARITY_FOLDS) -> dict[str, UnitScores]:
    """Polarity per sentence: 100 if its out-of-fold prediction is its label, else 0 (accuracy x 100)."""
    correct = 100.0 * (polarity_predictions(features, labels, folds) == np.asarray(labels))
    return {"polarity_accuracy": UnitScores("mean", list(ids), correct)}


def vector_set_units(task: str, vector_sets: Sequence[np.ndarray], multi_vector: bool, ids: Sequence[str],
                     gold: np.ndarray) -> dict[str, UnitScores]:
    """One representation's per-unit scores on a document task, from each unit document's vectors
    ((n_vectors, d) each; a single-vector representation has one row each)."""
    if len(vector_sets) != len(ids):
        raise ValueError(f"{task}: {len(vector_sets)} vector sets for {len(ids)} documents")
    if not multi_vector and any(len(v) != 1 for v in vector_sets):
        raise ValueError(f"{task}: a single-vector representation has one vector per document")
    if task == "lee":
        similarities = (symmetric_maxsim_similarities(vector_sets) if multi_vector
                        else cosine_similarities(np.concatenate(vector_sets)))
        return lee_units(similarities, gold, ids)
    if task == "polarity":
        features = np.stack([np.asarray(v, dtype=np.float64).mean(axis=0) for v in vector_sets])
        return polarity_units(features, gold, ids)
    raise ValueError(f"unknown document task {task!r}; known: lee, polarity")


def representation_units(task: str, vectors_by_id: dict[str, np.ndarray], multi_vector: bool,
                         gold: str | os.PathLike) -> dict[str, UnitScores]:
    """``vector_set_units`` of the documents a task's gold folder names, looked up in ``vectors_by_id``
    (an encodings folder's ``by_id()``); a document the folder lacks is named."""
    from multivec.data.document_task_gold import read_gold

    ids, labels = read_gold(task, gold)
    missing = [doc_id for doc_id in ids if doc_id not in vectors_by_id]
    if missing:
        raise KeyError(f"{task}: the encodings lack {len(missing)} of the task's {len(ids)} documents "
                       f"(first: {missing[:3]})")
    return vector_set_units(task, [vectors_by_id[doc_id] for doc_id in ids], multi_vector, ids, labels)

