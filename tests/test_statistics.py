"""The statistics layer (src/multivec/statistics): statistics, bootstrap CIs, the paired randomization
test, Holm, unit files and table statistics."""

import math

import numpy as np
import pandas as pd
import pytest
import sacrebleu
from scipy import stats

from multivec.statistics import (Measurement, bootstrap_ci, compute_statistic, holm, paired_difference,
                                 paired_randomization_test, read_units, stack_seeds, table_statistics, write_units)
from multivec.statistics.clusters import cluster_of, unit_clusters
from multivec.statistics.resampling import bootstrap_p, point_estimate, ratio_bootstrap_cis
from multivec.statistics.statistics import STATISTICS, bleu_components, weighted_statistic


def units(n):
    return [f"u{i}" for i in range(n)]


def stack(row, values, seed=None, metric="m", statistic="mean", names=None):
    names = names or units(len(values))
    return stack_seeds([Measurement(row, metric, statistic, names, values, seed)])[(row, metric)]


def test_bleu_statistic_equals_sacrebleu_corpus_bleu():
    hyps = ["the cat sat on the mat", "a dog barks at night", "hello world", "nothing matches here at all"]
    refs = ["the cat sat on a mat", "the dog barks at night", "hello there world", "something else entirely"]
    ours = compute_statistic("bleu", bleu_components(hyps, refs))
    assert ours == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score, abs=1e-9)
    lower = compute_statistic("bleu", bleu_components([h.upper() for h in hyps], refs, lowercase=True))
    assert lower == pytest.approx(sacrebleu.corpus_bleu([h.upper() for h in hyps], [refs], lowercase=True).score)


@pytest.mark.parametrize("tokenize", [None, "13a", "zh"])
def test_bleu_components_are_sacrebleus_statistics_through_its_public_api(tokenize):
    """Per document: sys_len, ref_len, correct 1..4, total 1..4 of sacrebleu's corpus_bleu of that document
    alone; summed over documents, corpus_bleu of them all. Chinese with tokenize='zh', an empty hypothesis,
    an empty reference, no n-gram match."""
    hyps = ["the cat sat on the mat.", "", "我们 是 学生。", "他们爱北京天安门", "nothing matches here", "a b"]
    refs = ["the cat sat on a mat.", "a reference for nothing", "我们是学生。", "我爱北京天安门。", "else", ""]
    kwargs = {} if tokenize is None else {"tokenize": tokenize}
    components = bleu_components(hyps, refs, tokenize=tokenize)
    assert components.shape == (len(hyps), 10) and components.dtype == np.float64
    for row, hyp, ref in zip(components, hyps, refs):
        alone = sacrebleu.corpus_bleu([hyp], [[ref]], **kwargs)
        assert row.tolist() == [alone.sys_len, alone.ref_len, *alone.counts, *alone.totals]
    corpus = sacrebleu.corpus_bleu(hyps, [refs], **kwargs)
    assert components.sum(axis=0).tolist() == [corpus.sys_len, corpus.ref_len, *corpus.counts, *corpus.totals]
    assert compute_statistic("bleu", components) == pytest.approx(corpus.score, abs=1e-9)
    assert components[1, 0] == 0 and components[1, 6:].sum() == 0  # the empty hypothesis
    assert bleu_components([], [], tokenize=tokenize).shape == (0, 10)


def test_ratio_perplexity_relative_drop_and_f1():
    c = np.array([[2.0, 4.0], [1.0, 4.0]])
    assert compute_statistic("ratio", c) == pytest.approx(3 / 8)
    assert compute_statistic("perplexity", c) == pytest.approx(math.exp(3 / 8))
    drop = np.array([[4.0, 2.0, 2.0, 2.0]])
    assert compute_statistic("relative_drop", drop) == pytest.approx(1 - math.exp(1) / math.exp(2))
    assert compute_statistic("f1", np.array([[3, 1, 2], [1, 0, 0]])) == pytest.approx(8 / (8 + 1 + 2))
    assert compute_statistic("precision", np.array([[3, 1, 2]])) == pytest.approx(0.75)
    assert compute_statistic("recall", np.array([[3, 1, 2]])) == pytest.approx(0.6)


def test_randomization_test_is_exact_and_matches_scipy():
    rng = np.random.default_rng(3)
    a, b = rng.random(9) + 0.3, rng.random(9)
    ours = paired_randomization_test(stack("A", a, 1), stack("B", b))
    theirs = stats.permutation_test((a, b), lambda x, y, axis: np.mean(x - y, axis=axis),
                                    permutation_type="samples", n_resamples=10_000, vectorized=True).pvalue
    assert ours == pytest.approx(theirs)  # 2^9 assignments: both enumerate them all


def test_randomization_test_of_identical_systems_is_one_and_of_distinct_ones_small():
    rng = np.random.default_rng(0)
    a = rng.random(400)
    assert paired_randomization_test(stack("A", a, 1), stack("B", a.copy())) == 1.0
    p = paired_randomization_test(stack("A", a + 0.2, 1), stack("B", a + rng.normal(0, 0.05, 400)))
    assert p < 0.001


def test_bootstrap_ci_of_a_mean_equals_scipy_on_the_values():
    values = np.random.default_rng(1).random(200) * 100
    lo, hi = bootstrap_ci(stack("A", values), n_resamples=1000, seed=7)
    res = stats.bootstrap((values,), np.mean, n_resamples=1000, method="percentile",
                          random_state=np.random.default_rng(7))
    assert (lo, hi) == pytest.approx(tuple(res.confidence_interval))
    assert lo < values.mean() < hi


def test_ratio_bootstrap_cis_equal_a_per_cell_loop_over_the_same_draws():
    rng = np.random.default_rng(3)
    a, b = rng.normal(1.0, 1.0, (40, 5)), rng.integers(0, 3, (40, 5)).astype(float)
    b[:, 4] = 0  # a cell no unit reaches: NaN
    a[:, 4] = 0
    lo, hi = ratio_bootstrap_cis(a, b, confidence=0.9, n_resamples=300, seed=11)
    draws = np.random.default_rng(11).integers(0, 40, size=(300, 40))
    for cell in range(4):
        replicates = a[draws, cell].sum(1) / b[draws, cell].sum(1)
        assert (lo[cell], hi[cell]) == pytest.approx(tuple(np.percentile(replicates, [5, 95])))
        assert lo[cell] <= a[:, cell].sum() / b[:, cell].sum() <= hi[cell]
    assert math.isnan(lo[4]) and math.isnan(hi[4])
    # the mean of per-unit values is the ratio with unit denominators: scipy's percentile bootstrap agrees
    values = rng.random(200)
    lo, hi = ratio_bootstrap_cis(values[:, None], np.ones((200, 1)), n_resamples=4000, seed=1)
    ref = stats.bootstrap((values,), np.mean, n_resamples=4000, method="percentile",
                          random_state=np.random.default_rng(2)).confidence_interval
    assert lo[0] == pytest.approx(ref.low, abs=0.01) and hi[0] == pytest.approx(ref.high, abs=0.01)
    # one denominator per unit, shared by the cells: the same CIs as the denominator repeated per cell
    shared = rng.integers(1, 4, (40, 1)).astype(float)
    np.testing.assert_array_equal(ratio_bootstrap_cis(a[:, :4], shared, seed=5),
                                  ratio_bootstrap_cis(a[:, :4], np.repeat(shared, 4, 1), seed=5))
    with pytest.raises(ValueError, match="one shape or"):
        ratio_bootstrap_cis(np.ones((3, 2)), np.ones((3, 3)))
    # every cell unreached (one cell, all denominators 0): NaN, not an unpacking error (found by the memory use
    # table's empty distance bins of the r = 1 model)
    lo, hi = ratio_bootstrap_cis(np.zeros((6, 1)), np.zeros((6, 1)), n_resamples=50)
    assert math.isnan(lo[0]) and math.isnan(hi[0])


def test_seeds_are_a_random_effect_of_the_ci_and_report_their_spread():
    rng = np.random.default_rng(2)
    base = rng.random(300)
    measurements = [Measurement("A", "m", "mean", units(300), base + shift, seed) for seed, shift in
                    ((1, 0.0), (2, 0.1), (3, 0.2))]
    s = stack_seeds(measurements)[("A", "m")]
    mean, sd = point_estimate(s)
    assert mean == pytest.approx(base.mean() + 0.1)
    assert sd == pytest.approx(0.1)
    lo, hi = bootstrap_ci(s, n_resamples=500)
    assert lo < mean < hi
    # the seed term: wider than the test-set noise of the seed mean alone (seed SD 0.1 over 3 seeds, t with 2 df)
    fixed_lo, fixed_hi = bootstrap_ci(s, n_resamples=500, seed_term="none")
    assert hi - lo > 2 * (fixed_hi - fixed_lo)
    assert (lo, hi) == bootstrap_ci(s, n_resamples=500)  # same seed, same bytes


def test_pair_correlation_resamples_documents():
    rng = np.random.default_rng(4)
    docs = [f"d{i}" for i in range(20)]
    pairs = [f"{a}|{b}" for i, a in enumerate(docs) for b in docs[i + 1:]]
    gold = rng.random(len(pairs))
    system = gold + rng.normal(0, 0.3, len(pairs))
    s = stack("A", np.column_stack([system, gold]), 1, statistic="pearson", names=pairs)
    value, _ = point_estimate(s)
    assert value == pytest.approx(np.corrcoef(system, gold)[0, 1])
    lo, hi = bootstrap_ci(s, n_resamples=300)
    assert lo < value < hi
    # an affine rescaling of a system's scores changes nothing, so the test must not see a difference; the test
    # resamples documents like the CI (a bootstrap test), not pairs
    t = stack("B", np.column_stack([3 * system + 5, gold]), statistic="pearson", names=pairs)
    d = paired_difference(s, t, n_resamples=300)
    assert d.p == 1.0 and d.difference == pytest.approx(0, abs=1e-12) and d.method == "bootstrap"
    assert d.resampled == "documents"
    with pytest.raises(ValueError, match="unit is the document"):
        paired_randomization_test(s, t)
    with pytest.raises(ValueError, match="pair"):
        Measurement("A", "m", "pearson", docs[:2], np.ones((2, 2)))


def test_pair_mean_resamples_documents_and_its_test_sees_a_shift():
    """``pair_mean`` (the mean pairwise cosine of multivec.distill.analysis.geometry): a cluster bootstrap over documents,
    wider than treating the pairs as independent, and no z-scoring in the randomization test (a mean is not
    invariant to a shift, a correlation is)."""
    rng = np.random.default_rng(5)
    docs = [f"d{i}" for i in range(30)]
    effect = rng.normal(0, 1, len(docs))  # a per-document effect makes the pairs of a document dependent
    index = [(i, j) for i in range(len(docs)) for j in range(i + 1, len(docs))]
    pairs = [f"{docs[i]}|{docs[j]}" for i, j in index]
    values = np.array([effect[i] + effect[j] for i, j in index]) + rng.normal(0, 0.1, len(pairs))
    s = stack("A", values, statistic="pair_mean", names=pairs)
    assert point_estimate(s)[0] == pytest.approx(values.mean())
    lo, hi = bootstrap_ci(s, n_resamples=400)
    naive_lo, naive_hi = bootstrap_ci(stack("A", values, names=pairs), n_resamples=400)
    assert lo < values.mean() < hi and (hi - lo) > 3 * (naive_hi - naive_lo)
    shifted = stack("B", values + 0.05, statistic="pair_mean", names=pairs)
    assert paired_difference(shifted, s, n_resamples=500).p < 0.01


def test_holm_matches_the_step_down_definition():
    adjusted = holm([0.01, 0.04, 0.03, 0.005, float("nan")])
    assert adjusted[:4] == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert math.isnan(adjusted[4])


def test_rows_get_holm_adjusted_p_values_over_all_of_them():
    from multivec.statistics.resampling import with_holm

    rows = [{"name": n, "p": p} for n, p in zip("abcd", [0.01, 0.04, 0.03, 0.005])]
    assert with_holm(rows) is rows
    assert [row["p_holm"] for row in rows] == [0.03, 0.06, 0.06, 0.02]


@pytest.mark.parametrize("kwargs, message", [
    (dict(units=["a", "a"], values=[1, 2]), "duplicate"),
    (dict(units=["a", "b"], values=[1, float("nan")]), "non-finite"),
    (dict(units=["a"], values=[1, 2]), "1 units but 2"),
    (dict(units=["a"], values=[1], seed=13.5), "integer"),
    (dict(units=["a"], values=[[1, 2]]), "takes 1 component"),
    (dict(units=[], values=[]), "no evaluation units"),
])
def test_bad_measurements_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Measurement(row="A", metric="m", statistic=kwargs.pop("statistic", "mean"), **kwargs)


def test_unit_file_round_trip_and_unit_mismatch(tmp_path):
    path = tmp_path / "u.parquet"
    ms = [Measurement("A", "m", "mean", units(5), np.arange(5.0), 13),
          Measurement("B", "m", "perplexity", units(5), np.ones((5, 2)), None)]
    assert write_units(path, ms) == 10
    back = read_units(path)
    assert [(m.row, m.seed, m.statistic) for m in back] == [("A", 13, "mean"), ("B", None, "perplexity")]
    assert np.array_equal(back[0].values[:, 0], np.arange(5.0))
    with pytest.raises(ValueError, match="given twice"):
        write_units(path, [ms[0], ms[0]])
    with pytest.raises(ValueError, match="units differ"):
        stack_seeds([ms[0], Measurement("A", "m", "mean", units(4), np.arange(4.0), 14)])


def test_table_statistics_columns_comparisons_and_holm():
    rng = np.random.default_rng(5)
    base = rng.random(200) * 100
    ms = [Measurement("A", "PI", "mean", units(200), base + 5 + rng.normal(0, 3, 200), s) for s in (1, 2)]
    ms += [Measurement("B", "PI", "mean", units(200), base, None),
           Measurement("C", "PI", "mean", units(200), base + rng.normal(0, 3, 200), None)]
    ts = table_statistics(ms, [{"row": "A", "against": ["B", "C"]}, {"row": "C", "against": "B"}],
                          n_resamples=300, n_permutations=300)
    assert list(ts.tests["against"]) == ["B", "C", "B"]
    assert (ts.tests["p_holm"] >= ts.tests["p"]).all()
    assert ts.tests["significant"].tolist()[:2] == [True, True]
    table = ts.add_columns(pd.DataFrame({"row": ["A", "B", "C", "D"], "PI": [0.0, 0.0, 0.0, 7.0]}), metrics=["PI"])
    assert list(table.columns) == ["row", "PI", "PI_lo", "PI_hi", "PI_sd", "n_seeds"]
    assert table["PI"].iloc[3] == 7.0 and math.isnan(table["PI_lo"].iloc[3])  # a row without units keeps its value
    assert (table["PI_lo"][:3] < table["PI"][:3]).all() and (table["PI"][:3] < table["PI_hi"][:3]).all()
    assert table["n_seeds"].tolist()[:3] == [2, 1, 1]
    with pytest.raises(ValueError, match="no row 'Z'"):
        table_statistics(ms, [{"row": "A", "against": "Z"}], n_resamples=100, n_permutations=100)
    assert any("Holm" in line for line in ts.markdown_tests())


def test_unit_clusters_parse_each_unit_id_format():
    queries = ["q0:doc:a:3", "q1:doc:a:3", "q2:other:0", "q3:doc:a:4"]
    assert cluster_of(queries[0], "propsegment_query") == "doc:a"
    assert unit_clusters(queries, "propsegment_query").tolist() == [0, 0, 1, 0]
    assert unit_clusters(["s1:0", "s1:512", "s2:0"], "lm_segment").tolist() == [0, 0, 1]
    assert unit_clusters(["d7:0", "d7:1", "d9:2"], "document_sentence").tolist() == [0, 0, 1]
    assert unit_clusters(["a", "b", "c"], None).tolist() == [0, 1, 2]
    assert unit_clusters(["a|b", "a|c", "b|c"], "document_pair").tolist() == [[0, 1], [0, 2], [1, 2]]
    with pytest.raises(ValueError, match="not a 'propsegment_query' id"):
        unit_clusters(["u1"], "propsegment_query")
    with pytest.raises(ValueError, match="unknown cluster kind"):
        unit_clusters(["u1"], "paragraph")
    with pytest.raises(ValueError, match="not a 'lm_segment'"):  # stack_seeds checks the ids fit the kind
        stack_seeds([Measurement("A", "m", "mean", ["x", "y"], [1.0, 2.0])], clusters="lm_segment")
    stacks = stack_seeds([Measurement("A", "m", "mean", ["s:0", "s:1"], [1.0, 2.0]),
                          Measurement("A", "n", "mean", ["s:0", "s:1"], [1.0, 2.0])], clusters={"m": "lm_segment"})
    assert stacks[("A", "m")].clusters == "lm_segment" and stacks[("A", "n")].clusters is None


def test_weighted_statistic_is_the_statistic_of_the_resample():
    rng = np.random.default_rng(8)
    draws = rng.integers(0, 25, size=(6, 25))
    weights = np.stack([np.bincount(d, minlength=25) for d in draws]).astype(float)
    for name, (_, k) in STATISTICS.items():
        c = rng.random((25, k)) + 0.1
        if name == "spearman":
            c = np.round(c * 4)  # ties
        if name == "bleu":
            c = rng.integers(1, 9, (25, 10)).astype(float)
        ours = weighted_statistic(name, weights, c)
        assert ours == pytest.approx([compute_statistic(name, c[d]) for d in draws]), name
        assert weighted_statistic(name, np.ones((1, 25)), c)[0] == pytest.approx(compute_statistic(name, c))


def test_clustered_queries_resample_and_swap_whole_documents():
    """Queries of a document share a per-document system error: the CI and the test must see documents, not
    queries; the randomization test swaps whole documents (exact: 2^4 assignments)."""
    rng = np.random.default_rng(6)
    names = [f"q{i}:doc{i // 10}:{i % 10}" for i in range(40)]
    base = rng.random(40)
    a = base + np.repeat(rng.normal(0, 0.3, 4), 10)
    sa = stack("A", a, 1, names=names)
    sb = stack("B", base, names=names)
    clustered = paired_difference(sa, sb, n_resamples=500, clusters="propsegment_query")
    naive = paired_difference(sa, sb, n_resamples=500)
    assert clustered.hi - clustered.lo > 2 * (naive.hi - naive.lo)
    assert clustered.method == "randomization" and clustered.resampled == "propsegment_query clusters"
    assert naive.p < 0.05 and clustered.p >= 1 / 8  # 4 documents: the smallest exact two-sided p is 2/16
    p = paired_randomization_test(sa, sb, clusters="propsegment_query")
    assert p == clustered.p and p * 16 == round(p * 16)
    # the stacks may carry the kind instead (stack_seeds(..., clusters=...))
    carried = stack_seeds([Measurement("A", "m", "mean", names, a, 1)], clusters="propsegment_query")[("A", "m")]
    assert paired_difference(carried, sb, n_resamples=500).p == clustered.p
    lo, hi = bootstrap_ci(carried, n_resamples=500)
    naive_lo, naive_hi = bootstrap_ci(sa, n_resamples=500)
    assert hi - lo > 2 * (naive_hi - naive_lo)


def test_paired_difference_with_seeds_reports_the_shown_difference_seed_sd_and_the_bootstrap_test():
    rng = np.random.default_rng(9)
    base = rng.random(300)
    ms = [Measurement("A", "m", "mean", units(300), base + shift + rng.normal(0, .05, 300), seed)
          for seed, shift in ((1, 0.0), (2, 0.1), (3, 0.2))]
    ms += [Measurement("B", "m", "mean", units(300), base + 0.02 * seed + rng.normal(0, .05, 300), seed)
           for seed in (1, 2, 3)]
    ms += [Measurement("C", "m", "mean", units(300), base, None)]
    stacks = stack_seeds(ms)
    a, b, c = stacks[("A", "m")], stacks[("B", "m")], stacks[("C", "m")]
    d = paired_difference(a, b, n_resamples=1000)
    per_seed_a = [compute_statistic("mean", v) for v in a.values]
    per_seed_b = [compute_statistic("mean", v) for v in b.values]
    assert d.difference == pytest.approx(np.mean(per_seed_a) - np.mean(per_seed_b))
    assert d.seed_sd == pytest.approx(np.std(np.subtract(per_seed_a, per_seed_b), ddof=1))
    assert d.method == "bootstrap" and d.resampled == "units and seeds"
    assert d.lo < d.difference < d.hi
    assert (d.p < 0.05) == (d.lo > 0 or d.hi < 0)  # the test inverts the CI
    # a seed effect of SD 0.1 over 3 seeds: a 0.06 difference is not established, however many queries
    assert d.p > 0.05
    vs_fixed = paired_difference(a, c, n_resamples=1000)
    assert vs_fixed.seed_sd == pytest.approx(point_estimate(a)[1])
    assert math.isnan(paired_difference(c, c, n_resamples=100).seed_sd)
    with pytest.raises(ValueError, match="one seed per row"):
        paired_randomization_test(a, b)


def test_ratio_comparison_across_denominators_is_a_bootstrap_test():
    """Nugget share vs text share of a token type: denominators ~10x apart; equal shares are not a difference."""
    rng = np.random.default_rng(10)
    nuggets = rng.poisson(15, 300) + 1
    tokens = 10 * nuggets
    names = units(300)
    a = stack("A", np.column_stack([rng.binomial(nuggets, 0.12), nuggets]), statistic="ratio", names=names)
    b = stack("B", np.column_stack([rng.binomial(tokens, 0.12), tokens]), statistic="ratio", names=names)
    d = paired_difference(a, b, n_resamples=1000)
    assert d.method == "bootstrap" and math.isnan(d.seed_sd)
    assert d.difference == pytest.approx(point_estimate(a)[0] - point_estimate(b)[0])


def test_bootstrap_p_inverts_the_percentile_ci():
    assert bootstrap_p(np.zeros(10)) == 1.0
    assert bootstrap_p(np.arange(1.0, 100.0)) == pytest.approx(1 / 100)
    assert bootstrap_p(np.r_[-1.0, np.arange(1.0, 100.0)]) == pytest.approx(3 / 101)
    assert math.isnan(bootstrap_p(np.array([np.nan])))


def test_ratio_bootstrap_cis_resample_clusters():
    rng = np.random.default_rng(12)
    clusters = np.repeat(np.arange(20), 10)
    a = (rng.normal(0, 1, 20)[clusters] + rng.normal(0, .1, 200) + 3)[:, None]
    b = np.ones((200, 1))
    lo, hi = ratio_bootstrap_cis(a, b, n_resamples=500, clusters=clusters)
    naive_lo, naive_hi = ratio_bootstrap_cis(a, b, n_resamples=500)
    assert hi[0] - lo[0] > 2 * (naive_hi[0] - naive_lo[0])
    # clusters of one unit each: the same draws as no clusters
    np.testing.assert_allclose(ratio_bootstrap_cis(a, b, n_resamples=200, seed=3, clusters=np.arange(200)),
                               ratio_bootstrap_cis(a, b, n_resamples=200, seed=3))


def test_a_pair_statistic_keeps_its_document_clusters_whatever_kind_is_given():
    pairs = ["a|b", "a|c", "b|c"]
    stacks = stack_seeds([Measurement("A", "r", "pearson", pairs, np.ones((3, 2))),
                          Measurement("A", "m", "mean", ["q0:a:0", "q1:a:1", "q2:b:0"], [1.0, 2.0, 3.0])],
                         clusters="propsegment_query")
    assert stacks[("A", "r")].clusters == "document_pair" and stacks[("A", "m")].clusters == "propsegment_query"


def test_bleu_statistic_smooths_as_sacrebleu_near_zero():
    """One smoothing everywhere: near 0 (orders with no match) the table's BLEU is sacrebleu's default
    corpus BLEU ('exp' smoothing), the number the reconstruction JSONs report; no match at all gives 0."""
    import sacrebleu

    from multivec.statistics.statistics import bleu_components, compute_statistic

    refs = ["the cat sat on the mat today", "a dog ran in the park", "birds fly south in winter"]
    for hyps in (["the cat the cat the cat", "a dog a dog", "birds winter"],  # unigrams match, no 4-gram
                 ["the cat sat on a rug", "dog ran park", "birds fly north"],
                 ["zzz", "yyy xxx", "www"]):  # no match at all
        ours = compute_statistic("bleu", bleu_components(hyps, refs))
        assert ours == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score, abs=1e-9)
