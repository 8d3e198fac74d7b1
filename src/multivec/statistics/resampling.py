"""Bootstrap confidence intervals, paired tests and Holm's correction, with training seeds as a random effect
and clustered units resampled as clusters.

What varies: the test set (units, possibly in clusters: the queries of a document, the segments of a stream,
the pairs of a document; ``multivec.statistics.clusters``) and, for trained rows, the training seed. A row's
value is the mean over its seeds of the per-seed statistics (``point_estimate``).

- **Units** are resampled as clusters (the cluster bootstrap, Davison & Hinkley 1997 §3.8: draw as many
  clusters as there are, with replacement, and take every unit of each; independent units are clusters of
  one). A resample is a vector of unit weights (how often each unit is drawn), and the statistic of the
  reweighted units is ``statistics.weighted_statistic``: a mean is the weighted mean (a ratio estimator over
  clusters of unequal size), a sum statistic (ratio, perplexity, BLEU, F1) re-sums weighted components.
  Pair statistics (Lee correlations, ``pair_mean``) resample *documents* and keep every pair between two
  distinct draws: a pair's weight is the product of its documents' multiplicities.
- **Seeds** are the second level (a two-level bootstrap of a crossed design: every seed is evaluated on
  every unit, so units and seeds are resampled independently, as in Owen 2007's pigeonhole bootstrap). In
  each resample r the per-seed statistics θ_{s,r} of the drawn units are averaged over seeds (m_r: the test-
  set noise of the seed mean, seed-by-unit noise included) and a seed term is added for every row with two
  seeds or more (``seed_term``):

  - ``"t"`` (default): τ·t_ν added to every replicate, with t_ν a Student-t draw, τ² = Σ_rows σ̂²_seed /
    n_seeds, and ν the Welch–Satterthwaite degrees of freedom of that sum (n_seeds − 1 per row). σ̂²_seed
    is the method-of-moments seed variance component: the seed-to-seed variance of the per-seed statistics
    (ddof 1) less the part of it the unit resampling already carries (the bootstrap variance of a seed's
    deviation from the seed mean × n/(n−1)), truncated at 0. Why a t: resampling 3 seeds, even with the
    deviations inflated by √(n/(n−1)) (which removes the (n−1)/n variance bias), gives a short-tailed seed
    term (10 distinct means), while a seed variance estimated from n − 1 = 2 degrees of freedom makes the
    calibrated pivot a t. Measured under the null with 3 seeds per row (1000 simulations, α = 0.05): this
    rejects 0.048 (seed SD ≈ test-set SE) and 0.062 (seed SD dominant, vs a deterministic row), and a
    row's CI misses the method's mean 0.04-0.05 of the time; ``"resample"`` rejects 0.13 and its CI misses
    0.15 when the seed SD dominates; scaling whole replicates by a t with the Satterthwaite df of unit +
    seed variance rejected 0.083-0.088 there, so it is not used. With no seed effect at all the truncated
    σ̂² is positive about a third of the time and the test is conservative (0.025).
    ``tests/test_statistics_calibration.py`` keeps the ``"t"`` measurements.
  - ``"resample"``: resample each row's seeds with replacement, deviations from the seed mean inflated by
    √(n/(n−1)) (kept to compare against ``"t"``);
  - ``"none"``: no seed term (the test-set noise of these particular trained models only; it rejected 0.39
    of true nulls with 3 seeds each, seed SD ≈ test-set SE).

  The two rows of a paired comparison draw their seeds independently (different trainings) and the same
  unit weights (paired). Rows with one seed or none (``seed=None``, deterministic) have no seed term.
- **Confidence interval** (``bootstrap_ci``): the percentile interval of those replicates (Efron &
  Tibshirani 1993, ch. 13). For one seed (or none) and independent units, not a pair statistic, it is
  ``scipy.stats.bootstrap``'s percentile interval on unit indices, as before.
- **Paired difference** (``paired_difference``): A − B = (mean over A's seeds) − (mean over B's seeds), its
  percentile CI from the paired two-level replicates, the seed SD of the difference and a two-sided p:

  - ``"randomization"`` for a ``mean`` statistic when neither row has a seed term: Fisher's paired
    randomization test (``paired_randomization_test``; ranx, Smucker et al. 2007), each *cluster*'s values
    swapped between the two systems with probability ½; calibrated for means (a sign-flip test of the
    per-unit differences, valid under the weak null too).
  - ``"bootstrap"`` otherwise (several seeds; sum and ratio statistics, whose two sides may have
    denominators 10× apart so that swapping components is not exchangeable; pair statistics, whose unit of
    resampling is the document): the test that inverts the percentile CI of the same replicates T*,
    p = min(1, (1 + 2·min(#{T* ≤ 0}, #{T* ≥ 0})) / (1 + R)), so p < α iff the (1 − α) CI excludes 0 (up to
    the +1). Its statistic is the difference shown.
- **Paired randomization test** (``paired_randomization_test``): two-sided p = (1 + #{|T*| ≥ |T|}) / (1 + R),
  all 2^C assignments of the C clusters when 2^C ≤ R (exact); one seed per row (or none) and no pair
  statistic (ValueError otherwise: ``paired_difference`` uses the bootstrap test there).
- **Holm** (``holm``): Holm–Bonferroni step-down adjusted p-values (Holm 1979).
- **Many ratios at once** (``ratio_bootstrap_cis``): the percentile bootstrap of Σa / Σb over units (or over
  clusters of units) for every cell of a figure (a curve's points share its documents, so one draw of
  documents serves them all); vectorised over cells, it equals a per-cell loop over the same draws (tested).

Everything takes a ``seed`` so the same inputs give the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Sequence

import numpy as np
from scipy import stats as scipy_stats

from multivec.statistics.clusters import pair_documents, unit_clusters
from multivec.statistics.statistics import PAIR_STATISTICS, STATISTICS, compute_statistic, weighted_statistic
from multivec.statistics.units import SeedStack

DEFAULT_RESAMPLES = 2000
DEFAULT_PERMUTATIONS = 5000
SEED_TERMS = ("t", "resample", "none")
TESTS = ("auto", "randomization", "bootstrap")
_CHUNK_ELEMENTS = 2_000_000  # resamples × units held at once

Clusters = str | Sequence[int] | np.ndarray | None


def _per_seed(statistic: str, values: np.ndarray) -> np.ndarray:
    """Statistic of each seed: values (n_seeds, n_units, k) -> (n_seeds,)."""
    return np.array([compute_statistic(statistic, v) for v in values])


def point_estimate(stack: SeedStack) -> tuple[float, float]:
    """(mean over seeds of the per-seed statistics, seed-to-seed SD with ddof 1; NaN for one seed)."""
    per_seed = _per_seed(stack.statistic, stack.values)
    sd = float(np.std(per_seed, ddof=1)) if len(per_seed) > 1 else float("nan")
    return float(per_seed.mean()), sd


# ---------------------------------------------------------------- what is resampled

@dataclass(frozen=True)
class _Structure:
    """How units are drawn: ``labels`` (n_units,) cluster labels, or the two documents of each pair."""

    n_units: int
    labels: np.ndarray | None = None  # cluster of each unit
    n_clusters: int = 0
    pairs: tuple[np.ndarray, np.ndarray] | None = None  # documents of each pair
    n_documents: int = 0
    name: str = "units"

    @property
    def independent(self) -> bool:
        return self.pairs is None and self.n_clusters == self.n_units


def _structure(statistic: str, units: list[str], kind: Clusters) -> _Structure:
    if statistic in PAIR_STATISTICS:
        a, b, n_docs = pair_documents(units)
        return _Structure(len(units), pairs=(a, b), n_documents=n_docs, name="documents")
    if kind is None or isinstance(kind, str):
        labels = unit_clusters(units, kind)
        name = "units" if kind in (None, "unit") else f"{kind} clusters"
    else:
        labels = np.unique(np.asarray(kind), return_inverse=True)[1].reshape(-1)
        name = "clusters"
        if len(labels) != len(units):
            raise ValueError(f"{len(labels)} cluster labels for {len(units)} units")
    n_clusters = int(labels.max()) + 1 if len(labels) else 0
    return _Structure(len(units), labels=labels, n_clusters=n_clusters,
                      name="units" if n_clusters == len(units) else name)


def _stack_clusters(a: SeedStack, b: SeedStack | None, clusters: Clusters) -> Clusters:
    if clusters is not None:
        return clusters
    if b is not None and a.clusters is not None and b.clusters is not None and a.clusters != b.clusters:
        raise ValueError(f"{a.row}/{a.metric} has {a.clusters!r} clusters but {b.row}/{b.metric} {b.clusters!r}")
    return a.clusters if a.clusters is not None else (b.clusters if b is not None else None)


def _multiplicities(rng: np.random.Generator, n_resamples: int, n: int) -> np.ndarray:
    """(R, n) how often each of n items is drawn in each of R draws of n with replacement."""
    draws = rng.integers(0, n, size=(n_resamples, n)) + n * np.arange(n_resamples)[:, None]
    return np.bincount(draws.ravel(), minlength=n_resamples * n).reshape(n_resamples, n).astype(np.float64)


def _weights(structure: _Structure, rng: np.random.Generator, n_resamples: int):
    """Unit weights of ``n_resamples`` cluster-bootstrap resamples, in chunks (R_chunk, n_units)."""
    chunk = max(1, min(n_resamples, _CHUNK_ELEMENTS // max(1, structure.n_units)))
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        if structure.pairs is not None:
            m = _multiplicities(rng, size, structure.n_documents)
            yield m[:, structure.pairs[0]] * m[:, structure.pairs[1]]
        else:
            yield _multiplicities(rng, size, structure.n_clusters)[:, structure.labels]


def _per_seed_replicates(rows: list[np.ndarray], statistic: str, structure: _Structure, n_resamples: int,
                         rng: np.random.Generator) -> list[np.ndarray]:
    """For each row's values (n_seeds, n_units, k): its per-seed statistics (n_seeds, R) over the same unit
    resamples."""
    out: list[list[np.ndarray]] = [[] for _ in rows]
    for w in _weights(structure, rng, n_resamples):
        for k, values in enumerate(rows):
            out[k].append(np.stack([weighted_statistic(statistic, w, v) for v in values]))
    return [np.concatenate(parts, axis=1) for parts in out]


# ---------------------------------------------------------------- the seed term

def seed_variance_component(per_seed: np.ndarray, replicates: np.ndarray) -> float:
    """Method-of-moments variance of the seed effect: the seed-to-seed variance of the per-seed statistics
    ``per_seed`` (n_seeds,) less the seed-by-unit part, which the unit resampling already carries (the
    bootstrap variance of a seed's deviation from the seed mean in ``replicates`` (n_seeds, R), × n/(n−1)),
    truncated at 0."""
    n = len(per_seed)
    if n < 2:
        return 0.0
    observed = float(np.var(per_seed, ddof=1))
    finite = np.isfinite(replicates).all(axis=0)
    if finite.sum() < 2:
        return observed
    r = replicates[:, finite]
    interaction = float(np.mean(np.var(r - r.mean(axis=0), axis=1, ddof=1))) * n / (n - 1)
    return max(0.0, observed - interaction)


def _two_level(rows: list[tuple[SeedStack, np.ndarray, float]], seed_term: str,
               rng: np.random.Generator) -> np.ndarray:
    """Replicates of Σ sign · (seed mean of the row's statistic) with each seeded row's seed term
    (module doc); ``rows``: (stack, per-seed replicates (n_seeds, R), sign)."""
    if seed_term not in SEED_TERMS:
        raise ValueError(f"seed_term={seed_term!r}; one of {SEED_TERMS}")
    total = sum(sign * reps.mean(axis=0) for _, reps, sign in rows)
    seeded = [(stack, reps, sign) for stack, reps, sign in rows if stack.has_seed_term]
    if seed_term == "none" or not seeded:
        return total
    n_resamples = total.shape[0]
    if seed_term == "resample":
        for stack, reps, sign in seeded:
            n = reps.shape[0]
            deviations = (reps - reps.mean(axis=0)) * np.sqrt(n / (n - 1))
            draws = rng.integers(0, n, size=(n, n_resamples))
            total = total + sign * np.take_along_axis(deviations, draws, axis=0).mean(axis=0)
        return total
    parts = []
    for stack, reps, _ in seeded:
        variance = seed_variance_component(_per_seed(stack.statistic, stack.values), reps)
        parts.append((variance / stack.n_seeds, stack.n_seeds - 1))
    tau2 = sum(v for v, _ in parts)
    if tau2 <= 0:
        return total
    df = tau2 ** 2 / sum(v ** 2 / d for v, d in parts)  # Welch–Satterthwaite over the seeded rows
    return total + np.sqrt(tau2) * rng.standard_t(df, size=n_resamples)


def _percentiles(replicates: np.ndarray, confidence: float) -> tuple[float, float]:
    alpha = 1.0 - confidence
    if not np.isfinite(replicates).any():
        return float("nan"), float("nan")
    lo, hi = np.nanpercentile(replicates, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(lo), float(hi)


def bootstrap_p(replicates: np.ndarray) -> float:
    """Two-sided p of the test that inverts the percentile CI of ``replicates`` of A − B:
    min(1, (1 + 2·min(#{T* ≤ 0}, #{T* ≥ 0})) / (1 + R)) over the finite replicates; NaN if none."""
    r = np.asarray(replicates, dtype=np.float64)
    r = r[np.isfinite(r)]
    if len(r) == 0:
        return float("nan")
    k = min(int(np.sum(r <= 0)), int(np.sum(r >= 0)))
    return min(1.0, (1 + 2 * k) / (1 + len(r)))


# ---------------------------------------------------------------- one row

def bootstrap_ci(stack: SeedStack, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                 seed: int = 0, *, clusters: Clusters = None, seed_term: str = "t") -> tuple[float, float]:
    """Percentile bootstrap CI of the row's value (mean over seeds of the per-seed statistic): the two-level
    bootstrap of the module doc (clusters of units; seeds as a random effect when there are two or more).
    ``clusters``: a kind of ``multivec.statistics.clusters`` or labels per unit; default ``stack.clusters``.
    One seed (or none), independent units, not a pair statistic: ``scipy.stats.bootstrap`` on unit indices."""
    structure = _structure(stack.statistic, stack.units, _stack_clusters(stack, None, clusters))
    if structure.independent and not stack.has_seed_term:
        return _scipy_ci(stack, confidence, n_resamples, seed)
    rng = np.random.default_rng(seed)
    reps = _per_seed_replicates([stack.values], stack.statistic, structure, n_resamples, rng)[0]
    return _percentiles(_two_level([(stack, reps, 1.0)], seed_term, rng), confidence)


def _scipy_ci(stack: SeedStack, confidence: float, n_resamples: int, seed: int) -> tuple[float, float]:
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

    def cis(self, numerators: np.ndarray, denominators: np.ndarray,
            clusters: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``ratio_bootstrap_cis`` with these settings."""
        return ratio_bootstrap_cis(numerators, denominators, self.confidence, self.n_resamples, self.seed,
                                   clusters=clusters)


def ratio_bootstrap_cis(numerators: np.ndarray, denominators: np.ndarray, confidence: float = 0.95,
                        n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0, *,
                        clusters: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap CIs of Σ_u a[u, c] / Σ_u b[u, c] for every cell c, resampling the units u
    (rows) jointly: (units × cells) numerators and denominators of that shape or (units × 1), one per unit
    shared by every cell; (lo, hi) of shape (cells,) out. ``clusters`` (units,): cluster labels, so that
    whole clusters are resampled (the cluster bootstrap); None: independent units. A resample in which a
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
    if clusters is None:
        # how often each unit is drawn in each resample (R × units): Σ over the draw = weights @ values
        weights = np.zeros((n_resamples, n_units))
        draws = rng.integers(0, n_units, size=(n_resamples, n_units))
        np.add.at(weights, (np.repeat(np.arange(n_resamples), n_units), draws.ravel()), 1.0)
    else:
        labels = np.unique(np.asarray(clusters), return_inverse=True)[1].reshape(-1)
        if len(labels) != n_units:
            raise ValueError(f"{len(labels)} cluster labels for {n_units} units")
        weights = _multiplicities(rng, n_resamples, int(labels.max()) + 1)[:, labels]
    with np.errstate(invalid="ignore", divide="ignore"):
        replicates = (weights @ a) / (weights @ b)  # a (units × 1) b broadcasts over the cells
    replicates[~np.isfinite(replicates)] = np.nan
    reached = ~np.all(np.isnan(replicates), axis=0)
    alpha = 1.0 - confidence
    if reached.any():  # a cell whose denominators are all 0 has no ratio in any resample: it stays NaN
        lo[reached], hi[reached] = np.nanpercentile(replicates[:, reached], [100 * alpha / 2, 100 * (1 - alpha / 2)],
                                                    axis=0)
    return lo, hi


# ---------------------------------------------------------------- two rows

def _check_pair(a: SeedStack, b: SeedStack) -> None:
    if a.statistic != b.statistic:
        raise ValueError(f"{a.row}/{a.metric} ({a.statistic}) and {b.row}/{b.metric} ({b.statistic}) "
                         "use different statistics")


def paired_randomization_test(a: SeedStack, b: SeedStack, n_permutations: int = DEFAULT_PERMUTATIONS,
                              seed: int = 0, *, clusters: Clusters = None) -> float:
    """Two-sided p-value of the paired randomization test of statistic(A) = statistic(B): each cluster's
    components (each unit's, for independent units) swapped between A and B with probability ½. One seed
    per row (or none); not for pair statistics (``paired_difference`` gives those the bootstrap test)."""
    _check_pair(a, b)
    if a.statistic in PAIR_STATISTICS:
        raise ValueError(f"{a.metric}: a pair statistic's unit is the document; use paired_difference's "
                         "bootstrap test")
    if a.n_seeds != 1 or b.n_seeds != 1:
        raise ValueError(f"{a.row}/{a.metric}: the randomization test takes one seed per row "
                         f"({a.n_seeds} and {b.n_seeds}); use paired_difference's two-level bootstrap test")
    units = a.units
    structure = _structure(a.statistic, units, _stack_clusters(a, b, clusters))
    x, y = a.values[0], b.aligned_to(units)[0]
    function = STATISTICS[a.statistic][0]
    observed = abs(float(function(x) - function(y)))
    n = structure.n_clusters
    if 2 ** n <= n_permutations:
        swaps = np.array(list(product([False, True], repeat=n)))
        exact = True
    else:
        swaps = np.random.default_rng(seed).random((n_permutations, n)) < 0.5
        exact = False
    count = 0
    step = max(1, min(500, _CHUNK_ELEMENTS // max(1, len(units) * x.shape[1])))
    for start in range(0, len(swaps), step):
        s = swaps[start:start + step][:, structure.labels, None]
        px, py = np.where(s, y, x), np.where(s, x, y)
        t = np.abs(function(px) - function(py))
        count += int(np.sum(t >= observed - 1e-12 * max(1.0, observed)))
    if exact:
        return count / len(swaps)
    return (count + 1) / (len(swaps) + 1)


@dataclass
class PairedDifference:
    """A − B (mean over A's seeds minus mean over B's seeds of the per-seed statistic), its percentile CI
    from the two-level bootstrap, the two-sided p-value, the seed SD of the difference and the test used.

    ``seed_sd``: SD (ddof 1) of the per-seed differences when both rows have the same seed labels (two or
    more); else √(sd_A² + sd_B²) over the rows with two seeds or more; NaN when neither has.
    ``method``: ``"randomization"`` or ``"bootstrap"``; ``resampled``: what was resampled (``"units"``,
    ``"documents"``, ``"<kind> clusters"``, + ``" and seeds"``)."""

    difference: float
    lo: float
    hi: float
    p: float
    seed_sd: float = float("nan")
    method: str = ""
    resampled: str = ""


def _seed_sd(a: SeedStack, b: SeedStack) -> float:
    if a.has_seed_term and b.has_seed_term and a.seeds == b.seeds:
        return float(np.std(_per_seed(a.statistic, a.values) - _per_seed(b.statistic, b.aligned_to(a.units)),
                            ddof=1))
    parts = [point_estimate(s)[1] for s in (a, b) if s.has_seed_term]
    return float(np.sqrt(sum(p ** 2 for p in parts))) if parts else float("nan")


def paired_difference(a: SeedStack, b: SeedStack, confidence: float = 0.95,
                      n_resamples: int = DEFAULT_RESAMPLES, n_permutations: int = DEFAULT_PERMUTATIONS,
                      seed: int = 0, *, clusters: Clusters = None, seed_term: str = "t",
                      test: str = "auto") -> PairedDifference:
    """A − B over the same units: the difference of the seed means, its paired two-level bootstrap CI (the
    same unit/cluster draws for A and B; seeds drawn independently per row) and a two-sided p (module doc):
    ``test="auto"`` is the randomization test for a ``mean`` statistic of rows without a seed term, the
    bootstrap test otherwise. ``clusters``: a kind of ``multivec.statistics.clusters`` or labels per unit
    (in ``a.units`` order); default the stacks' ``clusters``."""
    _check_pair(a, b)
    if test not in TESTS:
        raise ValueError(f"test={test!r}; one of {TESTS}")
    units = a.units
    values_b = b.aligned_to(units)
    b_aligned = SeedStack(b.row, b.metric, b.statistic, list(units), b.seeds, values_b, b.clusters)
    structure = _structure(a.statistic, units, _stack_clusters(a, b, clusters))
    difference = point_estimate(a)[0] - point_estimate(b_aligned)[0]
    rng = np.random.default_rng(seed)
    reps_a, reps_b = _per_seed_replicates([a.values, values_b], a.statistic, structure, n_resamples, rng)
    replicates = _two_level([(a, reps_a, 1.0), (b_aligned, reps_b, -1.0)], seed_term, rng)
    lo, hi = _percentiles(replicates, confidence)
    seeded = a.has_seed_term or b_aligned.has_seed_term
    if test == "auto":
        test = "randomization" if a.statistic == "mean" and not seeded else "bootstrap"
    if test == "randomization":
        p = paired_randomization_test(a, b_aligned, n_permutations, seed, clusters=clusters)
    else:
        p = bootstrap_p(replicates)
    resampled = structure.name + (" and seeds" if seeded and seed_term != "none" else "")
    return PairedDifference(float(difference), lo, hi, float(p), _seed_sd(a, b_aligned), test, resampled)


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
