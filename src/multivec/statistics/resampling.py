"""Bootstrap confidence intervals, the paired randomization test and Holm's correction.

- **Confidence interval** (``bootstrap_ci``): the percentile bootstrap over evaluation units
  (Efron & Tibshirani 1993, ch. 13), through ``scipy.stats.bootstrap`` on unit indices. With
  several seeds the units are resampled jointly and the statistic is averaged over seeds, so the
  interval covers the test-set noise of the seed-averaged number; the seed-to-seed SD is reported
  beside it. Pair statistics (Lee correlations) resample *documents* and keep the pairs among
  them (a cluster bootstrap; scipy has none, so it is done here).
- **Paired randomization test** (``paired_randomization_test``): under H0 the two systems are
  exchangeable on every unit, so each unit's components are swapped between them with probability
  ½ (Fisher's randomization test as in ranx and Smucker et al. 2007; sacrebleu's paired
  approximate randomization for BLEU is the same test on sentence statistics). Two-sided
  p = (1 + #{|T*| ≥ |T|}) / (1 + R); all 2ⁿ assignments when 2ⁿ ≤ R (exact). Several seeds: each
  unit's components averaged over seeds first. Pair correlations: each system's scores are
  z-scored first (a correlation is invariant to that), then pairs are swapped.
- **Paired difference** (``paired_difference``): A − B with a bootstrap CI over the same units.
- **Holm** (``holm``): Holm–Bonferroni step-down adjusted p-values (Holm 1979).
- **Many ratios at once** (``ratio_bootstrap_cis``): the percentile bootstrap of Σa / Σb over units for
  every cell of a figure (a curve's points share its documents, so one draw of documents serves
  them all); vectorised over cells, it equals a per-cell loop over the same draws (tested).

Everything takes a ``seed`` so the same inputs give the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np
from scipy import stats as scipy_stats

from multivec.statistics.statistics import PAIR_CORRELATIONS, PAIR_STATISTICS, STATISTICS, compute_statistic
from multivec.statistics.units import SeedStack

DEFAULT_RESAMPLES = 2000
DEFAULT_PERMUTATIONS = 5000


def _per_seed(statistic: str, values: np.ndarray) -> np.ndarray:
    """Statistic of each seed: values (n_seeds, n_units, k) -> (n_seeds,)."""
    return np.array([compute_statistic(statistic, v) for v in values])


def point_estimate(stack: SeedStack) -> tuple[float, float]:
    """(mean over seeds, seed-to-seed SD with ddof 1; NaN for one seed)."""
    per_seed = _per_seed(stack.statistic, stack.values)
    sd = float(np.std(per_seed, ddof=1)) if len(per_seed) > 1 else float("nan")
    return float(per_seed.mean()), sd


def _pair_documents(units: list[str]) -> tuple[np.ndarray, np.ndarray, int]:
    docs: dict[str, int] = {}
    a, b = [], []
    for u in units:
        left, right = u.split("|")
        a.append(docs.setdefault(left, len(docs)))
        b.append(docs.setdefault(right, len(docs)))
    return np.array(a), np.array(b), len(docs)


def _pair_resample_statistic(statistic: str, values: np.ndarray, units: list[str], rng: np.random.Generator,
                             n_resamples: int) -> np.ndarray:
    """Cluster bootstrap of a pair correlation: resample documents, keep every pair of distinct draws
    whose documents form an evaluated pair; (n_resamples,) seed-averaged statistics."""
    a, b, n_docs = _pair_documents(units)
    lookup = -np.ones((n_docs, n_docs), dtype=np.int64)
    lookup[a, b] = np.arange(len(units))
    lookup[b, a] = np.arange(len(units))
    out = np.empty(n_resamples)
    upper = np.triu_indices(n_docs, k=1)
    for r in range(n_resamples):
        draw = rng.integers(0, n_docs, n_docs)
        pairs = lookup[draw[upper[0]], draw[upper[1]]]
        pairs = pairs[pairs >= 0]
        out[r] = np.mean([compute_statistic(statistic, v[pairs]) for v in values])
    return out


def _resampled(stack_values: np.ndarray, statistic: str, units: list[str], n_resamples: int,
               seed: int) -> np.ndarray:
    """(n_resamples,) bootstrap replicates of the seed-averaged statistic."""
    rng = np.random.default_rng(seed)
    if statistic in PAIR_STATISTICS:
        return _pair_resample_statistic(statistic, stack_values, units, rng, n_resamples)
    n = stack_values.shape[1]
    idx = rng.integers(0, n, size=(n_resamples, n))
    return np.mean([STATISTICS[statistic][0](v[idx]) for v in stack_values], axis=0)


def bootstrap_ci(stack: SeedStack, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap CI of the seed-averaged statistic over the stack's units."""
    alpha = 1.0 - confidence
    if stack.statistic in PAIR_STATISTICS:
        replicates = _resampled(stack.values, stack.statistic, stack.units, n_resamples, seed)
        lo, hi = np.nanpercentile(replicates, [100 * alpha / 2, 100 * (1 - alpha / 2)])
        return float(lo), float(hi)
    function = STATISTICS[stack.statistic][0]
    values = stack.values

    def seed_averaged(index, axis=-1):
        index = np.moveaxis(np.asarray(index), axis, -1)
        return np.mean([function(v[index]) for v in values], axis=0)

    n = values.shape[1]
    if n < 2:
        value = float(seed_averaged(np.arange(n)))
        return value, value
    result = scipy_stats.bootstrap((np.arange(n),), seed_averaged, vectorized=True, n_resamples=n_resamples,
                                   confidence_level=confidence, method="percentile",
                                   random_state=np.random.default_rng(seed))
    lo, hi = result.confidence_interval
    return float(lo), float(hi)


@dataclass(frozen=True)
class BootstrapSettings:
    """How a figure's points get their CIs (config ``statistics``: confidence, bootstrap_resamples)."""

    confidence: float = 0.95
    n_resamples: int = DEFAULT_RESAMPLES
    seed: int = 0

    @classmethod
    def from_statistics(cls, statistics: dict) -> "BootstrapSettings":
        """From a rule's ``statistics`` params (``statistics_params()``: confidence, bootstrap_resamples)."""
        return cls(confidence=statistics["confidence"], n_resamples=statistics["bootstrap_resamples"])

    def cis(self, numerators: np.ndarray, denominators: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``ratio_bootstrap_cis`` with these settings."""
        return ratio_bootstrap_cis(numerators, denominators, self.confidence, self.n_resamples, self.seed)


def ratio_bootstrap_cis(numerators: np.ndarray, denominators: np.ndarray, confidence: float = 0.95,
                        n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap CIs of Σ_u a[u, c] / Σ_u b[u, c] for every cell c, resampling the units u
    (rows) jointly: (units × cells) numerators and denominators of that shape or (units × 1), one per unit
    shared by every cell; (lo, hi) of shape (cells,) out. A resample in which a
    cell's denominator sums to 0 leaves that cell out of its percentiles; a cell with no units, or whose
    denominators are all 0, is NaN."""
    a = np.asarray(numerators, dtype=np.float64)
    b = np.asarray(denominators, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or b.shape not in (a.shape, (a.shape[0], 1)):
        raise ValueError(f"numerators {a.shape} and denominators {b.shape}: need (units × cells) numerators and "
                         "denominators of one shape or (units × 1)")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence={confidence}: must lie in (0, 1)")
    n_units, n_cells = a.shape
    lo, hi = np.full(n_cells, np.nan), np.full(n_cells, np.nan)
    if n_units == 0:
        return lo, hi
    rng = np.random.default_rng(seed)
    # how often each unit is drawn in each resample (R × units): Σ over the draw = weights @ values
    weights = np.zeros((n_resamples, n_units))
    draws = rng.integers(0, n_units, size=(n_resamples, n_units))
    np.add.at(weights, (np.repeat(np.arange(n_resamples), n_units), draws.ravel()), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        replicates = (weights @ a) / (weights @ b)  # a (units × 1) b broadcasts over the cells
    replicates[~np.isfinite(replicates)] = np.nan
    reached = ~np.all(np.isnan(replicates), axis=0)
    alpha = 1.0 - confidence
    if reached.any():  # a cell whose denominators are all 0 has no ratio in any resample: it stays NaN
        lo[reached], hi[reached] = np.nanpercentile(replicates[:, reached], [100 * alpha / 2, 100 * (1 - alpha / 2)],
                                                    axis=0)
    return lo, hi


def _seed_averaged_components(stack: SeedStack, units: list[str]) -> np.ndarray:
    values = stack.aligned_to(units)
    if stack.statistic in PAIR_CORRELATIONS:  # z-score each seed's system scores (column 0) first
        values = values.copy()
        centred = values[..., 0] - values[..., 0].mean(axis=1, keepdims=True)
        scale = values[..., 0].std(axis=1, keepdims=True)
        values[..., 0] = centred / np.where(scale > 0, scale, 1.0)
    return values.mean(axis=0)


def _check_pair(a: SeedStack, b: SeedStack) -> None:
    if a.statistic != b.statistic:
        raise ValueError(f"{a.row}/{a.metric} ({a.statistic}) and {b.row}/{b.metric} ({b.statistic}) "
                         "use different statistics")


def paired_randomization_test(a: SeedStack, b: SeedStack, n_permutations: int = DEFAULT_PERMUTATIONS,
                              seed: int = 0) -> float:
    """Two-sided p-value of the paired randomization test of statistic(A) = statistic(B)."""
    _check_pair(a, b)
    units = a.units
    x, y = _seed_averaged_components(a, units), _seed_averaged_components(b, units)
    function = STATISTICS[a.statistic][0]
    observed = abs(float(function(x) - function(y)))
    n = len(units)
    if 2 ** n <= n_permutations:
        swaps = np.array(list(product([False, True], repeat=n)))
        exact = True
    else:
        swaps = np.random.default_rng(seed).random((n_permutations, n)) < 0.5
        exact = False
    count = 0
    for start in range(0, len(swaps), 500):
        s = swaps[start:start + 500, :, None]
        px, py = np.where(s, y, x), np.where(s, x, y)
        t = np.abs(function(px) - function(py))
        count += int(np.sum(t >= observed - 1e-12 * max(1.0, observed)))
    if exact:
        return count / len(swaps)
    return (count + 1) / (len(swaps) + 1)


@dataclass
class PairedDifference:
    """statistic(A) − statistic(B) (seed-averaged), its bootstrap CI, and the randomization p-value."""

    difference: float
    lo: float
    hi: float
    p: float


def paired_difference(a: SeedStack, b: SeedStack, confidence: float = 0.95,
                      n_resamples: int = DEFAULT_RESAMPLES, n_permutations: int = DEFAULT_PERMUTATIONS,
                      seed: int = 0) -> PairedDifference:
    """A − B over the same units: point difference of the seed means, paired bootstrap CI, p-value."""
    _check_pair(a, b)
    units = a.units
    values_a, values_b = a.values, b.aligned_to(units)
    difference = point_estimate(a)[0] - point_estimate(b)[0]
    # Same seed for both resamplings: the same unit draws (paired).
    replicates = (_resampled(values_a, a.statistic, units, n_resamples, seed)
                  - _resampled(values_b, b.statistic, units, n_resamples, seed))
    alpha = 1.0 - confidence
    lo, hi = np.nanpercentile(replicates, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    p = paired_randomization_test(a, b, n_permutations, seed)
    return PairedDifference(float(difference), float(lo), float(hi), float(p))


def holm(p_values) -> np.ndarray:
    """Holm–Bonferroni adjusted p-values, in the input order (NaN stays NaN and is not counted)."""
    p = np.asarray(p_values, dtype=np.float64)
    adjusted = np.full_like(p, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    order = valid[np.argsort(p[valid], kind="stable")]
    m = len(order)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted


def with_holm(rows: list[dict], p: str = "p", column: str = "p_holm", digits: int = 4) -> list[dict]:
    """``rows`` (dicts with a p-value under ``p``), each given its Holm-adjusted p under ``column`` over all
    rows, rounded to ``digits``; the same list is returned."""
    for row, adjusted in zip(rows, holm([row[p] for row in rows])):
        row[column] = round(float(adjusted), digits)
    return rows
