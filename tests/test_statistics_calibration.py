"""Calibration of the statistics layer's tests, measured (src/multivec/statistics/resampling.py).

For every kind of evaluation unit the pipeline has, simulate the null (A and B equally good in expectation)
1000 times and count how often ``paired_difference`` rejects at α = 0.05: the false-positive rate must lie in
[0.03, 0.07] (±3 binomial SEs around 0.05). Few resamples each (200) keep every case to seconds; fixed seeds
make the counts deterministic. Before the fix (units resampled jointly across seeds, pairs swapped one by
one, ratio components swapped across denominators 10x apart) the same simulations rejected 0.25 (clustered
queries), 0.35/0.30 (Lee pairs, Pearson/Spearman; 300 simulations), 0.26 (ratio shares), 0.46 (3 seeds each),
0.71 (3 seeds vs a deterministic row) and 0.42 (3 seeds, clustered queries); independent queries 0.052 and
BLEU 0.053 were already right.

Then three CIs recomputed with ``scipy.stats.bootstrap`` (percentile) agree within bootstrap noise.
"""

import numpy as np
import pytest
from scipy import stats

from multivec.statistics.resampling import bootstrap_ci, paired_difference
from multivec.statistics.statistics import compute_statistic
from multivec.statistics.units import SeedStack

SIMULATIONS = 1000
RESAMPLES = 200
ALPHA = 0.05


def stack(row, values, units, statistic="mean", seeds=None, clusters=None):
    values = np.asarray(values, dtype=np.float64)
    if statistic in ("mean", "pair_mean"):
        values = values.reshape(-1, len(units))[..., None]  # (seeds, units, 1)
    elif values.ndim == 2:
        values = values[None]
    return SeedStack(row, "m", statistic, list(units), seeds or [None] * values.shape[0], values, clusters)


def bleu_documents(rng, n, quality):
    """sacrebleu statistics of n documents whose n-gram precisions scale with ``quality``."""
    length = rng.poisson(20, n) + 5
    reference = length + rng.integers(-3, 4, n)
    precision = np.clip(np.array([0.6, 0.35, 0.2, 0.12])[None] * quality[:, None], 0.01, 0.95)
    total = np.maximum(length[:, None] - np.arange(4)[None], 0)
    return np.column_stack([length, reference, rng.binomial(total, precision), total]).astype(float)


def independent_queries(rng):
    n = 200
    difficulty = rng.normal(0, 1, n)
    units = [f"u{i}" for i in range(n)]
    return (stack("A", difficulty + rng.normal(0, .5, n), units),
            stack("B", difficulty + rng.normal(0, .5, n), units))


def clustered_queries(rng):
    """PropSegment-like: 60 documents × 5 queries, each system with its own per-document error."""
    documents, per = 60, 5
    document = np.repeat(np.arange(documents), per)
    units = [f"q{i}:doc{d}:{i % per}" for i, d in enumerate(document)]
    difficulty = rng.normal(0, 1, len(units))
    a = difficulty + rng.normal(0, .3, documents)[document] + rng.normal(0, .3, len(units))
    b = difficulty + rng.normal(0, .3, documents)[document] + rng.normal(0, .3, len(units))
    return stack("A", a, units, clusters="propsegment_query"), stack("B", b, units, clusters="propsegment_query")


def bleu(rng):
    n = 150
    quality = rng.uniform(0.6, 1.4, n)
    units = [f"d{i}" for i in range(n)]
    return (stack("A", bleu_documents(rng, n, quality), units, "bleu"),
            stack("B", bleu_documents(rng, n, quality), units, "bleu"))


def document_pairs(statistic):
    """Lee-like: all pairs of 30 documents, each system with its own per-document error."""
    def simulate(rng):
        n_docs = 30
        i, j = np.triu_indices(n_docs, 1)
        units = [f"d{a}|d{b}" for a, b in zip(i, j)]
        latent = rng.normal(0, 1, (n_docs, 3))
        gold = (latent[i] * latent[j]).sum(axis=1)
        ea, eb = rng.normal(0, 1, n_docs), rng.normal(0, 1, n_docs)
        a = gold + ea[i] + ea[j] + rng.normal(0, .5, len(i))
        b = gold + eb[i] + eb[j] + rng.normal(0, .5, len(i))
        return (stack("A", np.column_stack([a, gold]), units, statistic),
                stack("B", np.column_stack([b, gold]), units, statistic))
    return simulate


def ratio_shares(rng):
    """A token type's share among a document's nuggets vs among its tokens: equal shares (0.12), denominators
    about 10× apart (the selected-tokens table)."""
    n = 200
    nuggets = rng.poisson(15, n) + 1
    tokens = 10 * nuggets + rng.integers(0, 20, n)
    units = [f"d{i}" for i in range(n)]
    return (stack("A", np.column_stack([rng.binomial(nuggets, 0.12), nuggets]), units, "ratio"),
            stack("B", np.column_stack([rng.binomial(tokens, 0.12), tokens]), units, "ratio"))


def seeds(seed_sd, b_seeded=True, clustered=False):
    """3 training seeds per row: a per-seed shift of SD ``seed_sd`` plus seed-by-query noise; B also trained
    (3 seeds) or deterministic."""
    def simulate(rng):
        n, s = 300, 3
        document = np.repeat(np.arange(60), 5)
        units = [f"q{i}:doc{d}:{i % 5}" for i, d in enumerate(document)]
        difficulty = rng.normal(0, 1, n)

        def trained(n_seeds):
            shared = rng.normal(0, .3, 60)[document] if clustered else 0.0
            return (difficulty + shared + rng.normal(0, seed_sd, (n_seeds, 1))
                    + rng.normal(0, .5, (n_seeds, n)))

        kind = "propsegment_query" if clustered else None
        a = stack("A", trained(s), units, seeds=[1, 2, 3], clusters=kind)
        b = (stack("B", trained(s), units, seeds=[1, 2, 3], clusters=kind) if b_seeded
             else stack("B", difficulty + (rng.normal(0, .3, 60)[document] if clustered else 0.0)
                        + rng.normal(0, .5, n), units, clusters=kind))
        return a, b
    return simulate


def false_positive_rate(simulate, seed):
    rng = np.random.default_rng(seed)
    rejections = 0
    for k in range(SIMULATIONS):
        a, b = simulate(rng)
        rejections += paired_difference(a, b, 0.95, RESAMPLES, RESAMPLES, seed=k).p < ALPHA
    return rejections / SIMULATIONS


# Measured with these seeds (rate after the fix): independent 0.052, clustered 0.055, BLEU 0.057, Pearson
# 0.058, Spearman 0.035, ratio 0.045, 3 seeds each (seed SD ≈ test-set SE) 0.048, 3 seeds (seed SD dominant)
# vs a deterministic row 0.062, 3 seeds on clustered queries 0.037.
@pytest.mark.parametrize("name, simulate", [
    ("independent queries, mean (randomization test)", independent_queries),
    ("queries clustered by document, mean (cluster randomization test)", clustered_queries),
    ("documents, corpus BLEU (bootstrap test)", bleu),
    ("document pairs, Pearson (document bootstrap test)", document_pairs("pearson")),
    ("document pairs, Spearman (document bootstrap test)", document_pairs("spearman")),
    ("ratio shares, denominators 10x apart (bootstrap test)", ratio_shares),
    ("3 seeds each, seed SD comparable to the test-set SE", seeds(0.07)),
    ("3 seeds vs a deterministic row, seed SD dominant", seeds(0.3, b_seeded=False)),
    ("3 seeds each, queries clustered by document", seeds(0.07, clustered=True)),
])
def test_false_positive_rate_under_the_null_is_nominal(name, simulate):
    rate = false_positive_rate(simulate, seed=2024)
    assert 0.03 <= rate <= 0.07, f"{name}: false-positive rate {rate:.3f}"


def test_without_a_seed_effect_the_seed_term_is_conservative_not_liberal():
    """No seed effect at all (only seed-by-query noise): the truncated seed variance estimate is positive in
    about a third of the draws, so the test is conservative (measured 0.025), never liberal."""
    rate = false_positive_rate(seeds(0.0), seed=7)
    assert 0.005 <= rate <= 0.07, rate


@pytest.mark.parametrize("seed_sd", [0.07, 0.3])
def test_ci_of_a_three_seed_row_covers_the_method_mean(seed_sd):
    """The CI of one row's value covers the expected value over training seeds and test sets (0 here)."""
    rng = np.random.default_rng(11)
    misses = 0
    for k in range(SIMULATIONS):
        a, _ = seeds(seed_sd)(rng)
        lo, hi = bootstrap_ci(a, 0.95, RESAMPLES, seed=k)
        misses += not lo <= 0.0 <= hi
    assert 0.03 <= misses / SIMULATIONS <= 0.07, misses / SIMULATIONS


def _scipy_ci(data, statistic, seed, paired=True):
    return stats.bootstrap(data, statistic, paired=paired, vectorized=True, n_resamples=4000,
                           method="percentile", random_state=np.random.default_rng(seed)).confidence_interval


@pytest.mark.parametrize("statistic", ["mean", "ratio", "perplexity", "bleu"])
def test_one_seed_cis_agree_with_scipy_bootstrap(statistic):
    """A row's CI (``bootstrap_ci``) and a paired difference's CI (``paired_difference``: the weighted
    resampling path) against ``scipy.stats.bootstrap`` on the raw components, other random draws: within
    a tenth of the CI's width."""
    rng = np.random.default_rng(3)
    n = 150
    units = [f"d{i}" for i in range(n)]
    if statistic == "mean":
        a, b = rng.random(n), rng.random(n) * 0.8
    elif statistic == "ratio":
        a = np.column_stack([rng.poisson(3, n), rng.poisson(20, n) + 1]).astype(float)
        b = np.column_stack([rng.poisson(30, n), rng.poisson(200, n) + 1]).astype(float)
    elif statistic == "perplexity":
        words = rng.integers(50, 200, n).astype(float)
        a = np.column_stack([words * rng.normal(3.2, 0.4, n), words])
        b = np.column_stack([words * rng.normal(3.3, 0.4, n), words])
    else:
        quality = rng.uniform(0.6, 1.4, n)
        a, b = bleu_documents(rng, n, quality), bleu_documents(rng, n, quality * 0.9)
    sa, sb = stack("A", a, units, statistic), stack("B", b, units, statistic)
    index = np.arange(n)
    components = lambda x: x[:, None] if x.ndim == 1 else x  # noqa: E731

    def of(x, idx):
        return compute_statistic(statistic, components(x)[idx])

    lo, hi = bootstrap_ci(sa, 0.95, 4000, seed=1)
    ref = _scipy_ci((index,), lambda i, axis=-1: of(a, i), seed=2, paired=False)
    width = ref.high - ref.low
    assert lo == pytest.approx(ref.low, abs=0.1 * width) and hi == pytest.approx(ref.high, abs=0.1 * width)

    d = paired_difference(sa, sb, 0.95, 4000, 200, seed=1)
    ref = _scipy_ci((index,), lambda i, axis=-1: of(a, i) - of(b, i), seed=2, paired=False)
    width = ref.high - ref.low
    assert d.difference == pytest.approx(compute_statistic(statistic, components(a))
                                         - compute_statistic(statistic, components(b)))
    assert d.lo == pytest.approx(ref.low, abs=0.1 * width) and d.hi == pytest.approx(ref.high, abs=0.1 * width)


def test_every_clustered_table_names_a_kind_its_unit_ids_parse_under():
    """TABLE_CLUSTERS (one place): each table's kind is a known kind, and the unit ids its producers write
    (PropSegment queries, PropSegment sentences, LM segments) parse under it into their document."""
    from multivec.statistics.clusters import CLUSTER_KINDS, TABLE_CLUSTERS, unit_clusters
    from multivec.nugget.language_model import segment_unit_id
    from multivec.subencoder.data.propsegment import Sentence
    from multivec.subencoder.evaluation.retrieval import query_unit_id

    assert set(TABLE_CLUSTERS.values()) <= set(CLUSTER_KINDS)

    class Query:  # the two fields query_unit_id reads of a RetrievalSet query
        def __init__(self, document_id, sentence_index):
            self.document_id, self.sentence_index = document_id, sentence_index

    class Queries:
        queries = [Query("doc-a", 0), Query("doc-a", 1), Query("doc-b", 0)]

    sentences = [Sentence("c1", "doc-a", 0, "", []), Sentence("c1", "doc-a", 1, "", []),
                 Sentence("c1", "doc-b", 0, "", [])]
    produced = {"propsegment_query": [query_unit_id(Queries, row) for row in range(3)],
                "document_sentence": [s.key for s in sentences],
                "lm_segment": [segment_unit_id(s, p) for s, p in (("stream-a", 0), ("stream-a", 1), ("stream-b", 0))]}
    for table, kind in TABLE_CLUSTERS.items():
        assert unit_clusters(produced[kind], kind).tolist() == [0, 0, 1], table
    assert TABLE_CLUSTERS["subencoder_table7"] == "document_sentence"
