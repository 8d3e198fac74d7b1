"""Statistics a metric is computed with, each a function of its evaluation units' components.

A metric is kept per evaluation unit as a small vector of *components* whose sum over units is
a sufficient statistic, so that a bootstrap resample or a randomization swap only re-sums rows:

| name | components per unit | value |
|---|---|---|
| ``mean`` | (x) | mean of x (MRR, P@1, R@k, accuracy: per-unit x) |
| ``ratio`` | (a, b) | Σa / Σb |
| ``perplexity`` | (nll, tokens) | exp(Σnll / Σtokens) |
| ``relative_drop`` | (nll₀, tok₀, nll₁, tok₁) | 1 − ppl₁ / ppl₀, the share of perplexity a change removes |
| ``bleu`` | sacrebleu's sentence statistics (sys_len, ref_len, correct₁..₄, total₁..₄) | corpus BLEU (0–100; sacrebleu's default 'exp' smoothing) |
| ``f1`` / ``precision`` / ``recall`` | (tp, fp, fn) | micro-averaged over units |
| ``pearson`` / ``spearman`` | (system, gold) per document *pair* | correlation over the pairs |
| ``pair_mean`` | (x) per document *pair* | mean of x over the pairs (e.g. the mean pairwise cosine) |

Each function takes components of shape (..., n_units, k) and returns shape (...): the leading
axes are resamples, so a bootstrap evaluates thousands of resamples in one call. The pair
correlations are not sums over units; ``multivec.statistics.resampling`` resamples documents
and keeps the pairs among them (``PAIR_STATISTICS``).

Corpus BLEU is computed here from summed sacrebleu statistics with sacrebleu's formula and its default
'exp' smoothing (4-grams, brevity penalty; the one smoothing every BLEU of the project uses);
``tests/test_statistics.py`` checks it equals ``sacrebleu.corpus_bleu`` on the same sentences. It is vectorised over resamples, which sacrebleu's
per-call ``compute_bleu`` is not.

``weighted_statistic(name, weights, components)`` is the statistic of many reweighted copies of one set of
units at once (a bootstrap resample is a vector of how often each unit is drawn): sums become
``weights @ components``, a mean the weighted mean, and a pair correlation the weighted Pearson correlation
(of weighted mid-ranks for Spearman), which equals the correlation of the resample with each pair repeated
as often as it is drawn. With unit weights it is the statistic itself (tested).
"""

from __future__ import annotations

from typing import Callable

import numpy as np


def _mean(c: np.ndarray) -> np.ndarray:
    return c[..., 0].mean(axis=-1)


def _ratio(c: np.ndarray) -> np.ndarray:
    s = c.sum(axis=-2)
    return s[..., 0] / s[..., 1]


def _perplexity(c: np.ndarray) -> np.ndarray:
    s = c.sum(axis=-2)
    return np.exp(s[..., 0] / s[..., 1])


def _relative_drop(c: np.ndarray) -> np.ndarray:
    s = c.sum(axis=-2)
    return 1.0 - np.exp(s[..., 2] / s[..., 3] - s[..., 0] / s[..., 1])


BLEU_COMPONENTS = 10  # sys_len, ref_len, correct 1..4, total 1..4 (sacrebleu's statistics order)


def _bleu(c: np.ndarray) -> np.ndarray:
    # sacrebleu's corpus BLEU with its default 'exp' smoothing (the NIST mteval-v13a method: the k-th n-gram
    # order with no match counts 1 / (2^k · total)), so that a table and sacrebleu give the same number even
    # near 0; no match at all, or an order with no n-grams, gives 0 as in sacrebleu.
    s = c.sum(axis=-2)
    sys_len, ref_len = s[..., 0], s[..., 1]
    correct, total = s[..., 2:6], s[..., 6:10]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        unmatched = (correct == 0) & (total > 0)
        halvings = np.cumsum(unmatched, axis=-1)  # how many unmatched orders so far: 2^k in the denominator
        safe_total = np.where(total > 0, total, 1)
        precisions = np.where(correct > 0, correct / safe_total, 1.0 / (2.0 ** halvings * safe_total))
        log_p = np.where(total > 0, np.log(precisions), -np.inf)
        geo = np.exp(log_p.mean(axis=-1))
        bp = np.where(sys_len < ref_len, np.exp(1.0 - ref_len / np.where(sys_len > 0, sys_len, 1)), 1.0)
    bleu = 100.0 * bp * geo
    return np.where((sys_len > 0) & (correct.max(axis=-1) > 0) & (total.min(axis=-1) > 0), bleu, 0.0)


def _f1(c: np.ndarray) -> np.ndarray:
    s = c.sum(axis=-2)
    denominator = 2 * s[..., 0] + s[..., 1] + s[..., 2]
    return np.where(denominator > 0, 2 * s[..., 0] / np.where(denominator > 0, denominator, 1), 0.0)


def _precision(c: np.ndarray) -> np.ndarray:
    s = c.sum(axis=-2)
    d = s[..., 0] + s[..., 1]
    return np.where(d > 0, s[..., 0] / np.where(d > 0, d, 1), 0.0)


def _recall(c: np.ndarray) -> np.ndarray:
    s = c.sum(axis=-2)
    d = s[..., 0] + s[..., 2]
    return np.where(d > 0, s[..., 0] / np.where(d > 0, d, 1), 0.0)


def _rankdata(x: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata
    return rankdata(x, axis=-1)


def pair_correlation(system: np.ndarray, gold: np.ndarray, kind: str) -> float:
    """Pearson or Spearman correlation of two 1-d arrays (NaN when either is constant)."""
    if kind == "spearman":
        system, gold = _rankdata(system), _rankdata(gold)
    if len(system) < 2 or np.std(system) == 0 or np.std(gold) == 0:
        return float("nan")
    return float(np.corrcoef(system, gold)[0, 1])


def _pearson(c: np.ndarray) -> np.ndarray:
    return np.apply_along_axis(lambda flat: pair_correlation(flat[0::2], flat[1::2], "pearson"), -1,
                               c.reshape(*c.shape[:-2], -1))


def _spearman(c: np.ndarray) -> np.ndarray:
    return np.apply_along_axis(lambda flat: pair_correlation(flat[0::2], flat[1::2], "spearman"), -1,
                               c.reshape(*c.shape[:-2], -1))


# name -> (function of components (..., n_units, k) -> (...), number of components or None for any)
STATISTICS: dict[str, tuple[Callable[[np.ndarray], np.ndarray], int | None]] = {
    "mean": (_mean, 1),
    "ratio": (_ratio, 2),
    "perplexity": (_perplexity, 2),
    "relative_drop": (_relative_drop, 4),
    "bleu": (_bleu, BLEU_COMPONENTS),
    "f1": (_f1, 3),
    "precision": (_precision, 3),
    "recall": (_recall, 3),
    "pearson": (_pearson, 2),
    "spearman": (_spearman, 2),
    "pair_mean": (_mean, 1),
}
# Statistics over document pairs: units are "a|b" pairs, resampled by document (resampling.py); the
# correlations among them are invariant to z-scoring a system's scores (the randomization test uses that).
PAIR_CORRELATIONS = {"pearson", "spearman"}
PAIR_STATISTICS = PAIR_CORRELATIONS | {"pair_mean"}


def _weighted_pearson(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson correlation per row of weights w (R, n) of x and y ((n,) or (R, n)); NaN where one is constant."""
    total = w.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        mx = (w * x).sum(axis=-1) / total
        my = (w * y).sum(axis=-1) / total
        dx, dy = x - mx[:, None], y - my[:, None]
        sxx, syy, sxy = (w * dx * dx).sum(-1), (w * dy * dy).sum(-1), (w * dx * dy).sum(-1)
        r = sxy / np.sqrt(sxx * syy)
    scale_x = np.max(np.abs(x)) ** 2 * total + 1e-300
    scale_y = np.max(np.abs(y)) ** 2 * total + 1e-300
    constant = (sxx <= 1e-12 * scale_x) | (syy <= 1e-12 * scale_y) | (np.count_nonzero(w, axis=-1) < 2)
    return np.where(constant, np.nan, np.clip(r, -1.0, 1.0))


def _weighted_ranks(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Mid-ranks (R, n) of x in each weighted multiset: #{smaller draws} + (#{tied draws} + 1) / 2."""
    values, inverse = np.unique(x, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(inverse[order]) != 0])
    per_value = np.add.reduceat(w[:, order], starts, axis=1)  # (R, distinct values): draws of each value
    below = np.cumsum(per_value, axis=-1) - per_value
    return (below + (per_value + 1.0) / 2.0)[:, inverse]


def weighted_statistic(name: str, weights: np.ndarray, components: np.ndarray) -> np.ndarray:
    """The statistic ``name`` of ``components`` (n_units, k) with each unit counted ``weights[r, u]`` times,
    for every row r of ``weights`` (R, n_units): (R,). A resample whose statistic is undefined is NaN."""
    w = np.asarray(weights, dtype=np.float64)
    c = np.asarray(components, dtype=np.float64)
    if c.ndim == 1:
        c = c[:, None]
    check_statistic(name, c.shape[-1])
    if name in ("pearson", "spearman"):
        x, y = c[:, 0], c[:, 1]
        if name == "spearman":
            x, y = _weighted_ranks(w, x), _weighted_ranks(w, y)
        return _weighted_pearson(w, x, y)
    if name in ("mean", "pair_mean"):
        with np.errstate(divide="ignore", invalid="ignore"):
            return (w @ c[:, 0]) / w.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return STATISTICS[name][0]((w @ c)[:, None, :])


def check_statistic(name: str, components: int) -> None:
    """ValueError unless ``name`` is a registered statistic taking ``components`` per unit."""
    if name not in STATISTICS:
        raise ValueError(f"unknown statistic {name!r}; registered: {sorted(STATISTICS)}")
    expected = STATISTICS[name][1]
    if expected is not None and components != expected:
        raise ValueError(f"statistic {name!r} takes {expected} component(s) per unit, got {components}")


def compute_statistic(name: str, components: np.ndarray) -> np.ndarray:
    """The statistic ``name`` of ``components`` (..., n_units, k); a float for a 2-d input."""
    components = np.asarray(components, dtype=np.float64)
    if components.ndim == 1:
        components = components[:, None]
    check_statistic(name, components.shape[-1])
    value = STATISTICS[name][0](components)
    return float(value) if np.ndim(value) == 0 else value


def bleu_components(hypotheses: list[str], references: list[str], lowercase: bool = False,
                    tokenize: str | None = None) -> np.ndarray:
    """Per-document sacrebleu statistics (n_docs, 10) for the ``bleu`` statistic: each document's
    ``BLEU.sentence_score`` against its one reference, as (sys_len, ref_len, counts 1..4, totals 1..4) of
    its ``BLEUScore``. ``tokenize`` None is sacrebleu's default (13a)."""
    from sacrebleu.metrics import BLEU

    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    kwargs = {"lowercase": lowercase}
    if tokenize is not None:
        kwargs["tokenize"] = tokenize
    # effective_order only changes the sentence's score, never its counts (and spares sentence_score's
    # warning); the default 'exp' smoothing does not change the counts either ('add-k' would).
    bleu = BLEU(effective_order=True, **kwargs)
    stats = []
    for hypothesis, reference in zip(hypotheses, references):
        score = bleu.sentence_score(hypothesis, [reference])
        stats.append([score.sys_len, score.ref_len, *score.counts, *score.totals])
    return np.asarray(stats, dtype=np.float64).reshape(len(hypotheses), BLEU_COMPONENTS)
