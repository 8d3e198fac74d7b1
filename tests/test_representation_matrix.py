"""The representation matrix (multivec.evaluation.representation_matrix) and the document tasks every
representation is scored on (multivec.evaluation.document_tasks)."""

from __future__ import annotations

import numpy as np
import pytest

from multivec.evaluation.document_tasks import (lee_units, polarity_units, representation_units,
                                                 symmetric_maxsim_similarities, vector_set_units)
from multivec.evaluation.representation_matrix import (CellSource, Representation, Size, common_units, matrix_cells,
                                                       matrix_markdown, pareto_front, plot_matrix, postings_size)
from multivec.statistics import Measurement, write_units


# ---------------------------------------------------------------- document tasks

def test_symmetric_maxsim_is_the_mean_of_both_directions_of_eq_10():
    rng = np.random.default_rng(0)
    sets = [rng.normal(size=(n, 5)).astype(np.float32) for n in (1, 3, 2, 4)]

    def maxsim(q, d):
        qn = q / np.linalg.norm(q, axis=1, keepdims=True)
        dn = d / np.linalg.norm(d, axis=1, keepdims=True)
        return (qn @ dn.T).max(axis=1).mean()

    got = symmetric_maxsim_similarities(sets)
    want = np.array([[(maxsim(a, b) + maxsim(b, a)) / 2 for b in sets] for a in sets])
    np.testing.assert_allclose(got, want, atol=1e-6)
    np.testing.assert_allclose(got, got.T)


def test_one_vector_per_document_scores_the_same_either_way():
    """A multi-vector row whose documents keep one vector each is a single-vector row: MaxSim is the cosine and
    the mean vector is the vector, so Lee and polarity give the same units and values."""
    rng = np.random.default_rng(1)
    n = 12
    ids = [f"lee_{k:02d}" for k in range(n)]
    vectors = rng.normal(size=(n, 6))
    ratings = rng.uniform(1, 5, size=(n, n))
    ratings = (ratings + ratings.T) / 2
    single = vector_set_units("lee", [v[None] for v in vectors], False, ids, ratings)
    multi = vector_set_units("lee", [v[None] for v in vectors], True, ids, ratings)
    assert single["lee_pearson"].units == multi["lee_pearson"].units
    np.testing.assert_allclose(single["lee_pearson"].values, multi["lee_pearson"].values, atol=1e-6)
    labels = np.array([0, 1] * 10)
    features = rng.normal(size=(20, 4)) + labels[:, None]
    sentence_ids = [f"s{k}" for k in range(20)]
    a = vector_set_units("polarity", [f[None] for f in features], False, sentence_ids, labels)
    b = vector_set_units("polarity", [np.stack([f, f]) for f in features], True, sentence_ids, labels)
    np.testing.assert_array_equal(a["polarity_accuracy"].values, b["polarity_accuracy"].values)


def test_lee_units_are_the_upper_triangle_pairs_and_bad_shapes_are_named():
    sims = np.arange(9, dtype=float).reshape(3, 3)
    ratings = sims * 2
    units = lee_units(sims, ratings, ["a", "b", "c"])
    assert units["lee_pearson"].units == ["a|b", "a|c", "b|c"]
    assert units["lee_pearson"].values.tolist() == [[1, 2], [2, 4], [5, 10]]
    assert units["lee_pearson"].value() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="one row per document"):
        lee_units(sims, ratings[:2, :2], ["a", "b", "c"])
    with pytest.raises(ValueError, match="single-vector"):
        vector_set_units("lee", [np.ones((2, 3))] * 3, False, ["a", "b", "c"], ratings)


def test_representation_units_name_missing_documents(tmp_path):
    from multivec.io import write_jsonl

    gold = tmp_path / "eval_polarity"
    gold.mkdir()
    write_jsonl(gold / "labels.jsonl", [{"id": f"p{k}", "label": k % 2} for k in range(10)])
    vectors = {f"p{k}": np.full((2, 3), float(k % 2)) + 0.01 * k for k in range(10)}
    scores = representation_units("polarity", vectors, True, gold)
    assert scores["polarity_accuracy"].units == [f"p{k}" for k in range(10)]
    del vectors["p3"]
    with pytest.raises(KeyError, match="lack 1 of the task's 10 documents"):
        representation_units("polarity", vectors, True, gold)


def test_polarity_units_are_out_of_fold_predictions():
    labels = np.array([0, 1] * 10)
    units = polarity_units(labels[:, None] * 2.0 - 1, labels, [str(k) for k in range(20)])
    assert units["polarity_accuracy"].value() == 100.0


# ---------------------------------------------------------------- the matrix

def _units(tmp_path, table, rows, seeds=(None,)):
    """A unit file: ``rows``: row -> (metric, unit ids, per-unit values)."""
    measurements = [Measurement(row, metric, "mean", units, np.asarray(values) + (0 if seed is None else seed % 2),
                                seed)
                    for row, (metric, units, values) in rows.items() for seed in seeds]
    path = tmp_path / f"{table}.tables.parquet"
    write_units(path, measurements)
    return path


def test_each_task_is_computed_on_the_units_every_representation_shares(tmp_path):
    """The distillation table scores PI on its first queries only: the PI column is restricted to those for every
    row, and a cell's value is the mean over exactly those units."""
    queries = [f"{k}:L{k}" for k in range(40)]
    rng = np.random.default_rng(3)
    big = rng.uniform(0, 100, size=40)
    small = rng.uniform(0, 100, size=10)
    files = {"table2": _units(tmp_path, "table2", {"bm25": ("PI", queries, big)}),
             "distill_table": _units(tmp_path, "distill_table", {"student": ("pi_mrr", queries[:10], small)},
                                     seeds=(13, 14))}
    reps = [Representation("BM25", "lexical", "baseline", {"PI": CellSource("table2", "bm25", "PI")}),
            Representation("student", "single-vector", "distill", {"PI": CellSource("distill_table", "student",
                                                                                     "pi_mrr")})]
    records = matrix_cells(reps, files, {("BM25", "PI"): Size.of_postings(30),
                                         ("student", "PI"): Size.of_vectors(1, 384)}, n_resamples=200)
    by = {r["representation"]: r for r in records}
    assert by["BM25"]["value"] == pytest.approx(big[:10].mean())
    assert by["BM25"]["n_units"] == 10 and by["BM25"]["task_units"] == 40
    assert by["student"]["value"] == pytest.approx(small.mean() + 0.5)  # seeds 13 and 14: +1 and +0
    assert by["student"]["n_seeds"] == 2 and by["student"]["seed_sd"] > 0
    assert by["BM25"]["lo"] < by["BM25"]["value"] < by["BM25"]["hi"]
    assert by["student"]["bytes_per_document"] == 384 * 4 and by["BM25"]["bytes_per_document"] == 240
    markdown = matrix_markdown(records, "Scale: test.")
    assert "PI: 10 queries shared by every representation in the column (of 40" in markdown
    plot_matrix(records, tmp_path / "m.png", "test")
    assert (tmp_path / "m.png").stat().st_size > 0


def test_the_pareto_front_keeps_what_nothing_beats_on_quality_and_bytes():
    records = [{"task": "PI", "value": v, "bytes_per_document": b, "pareto": False, "representation": n}
               for n, v, b in (("small good", 90, 100), ("big better", 95, 1000), ("big worse", 80, 1000),
                               ("tie twin", 90, 100), ("unsized", 99, None))]
    front = {r["representation"] for r in pareto_front(records) if r["pareto"]}
    assert front == {"small good", "big better", "tie twin"}


def test_bad_layouts_are_named(tmp_path):
    files = {"table2": _units(tmp_path, "table2", {"bm25": ("PI", ["0:a", "1:b"], [1.0, 2.0])})}
    with pytest.raises(KeyError, match="no row 'nope'"):
        matrix_cells([Representation("x", "lexical", "baseline", {"PI": CellSource("table2", "nope", "PI")})],
                     files, {})
    with pytest.raises(KeyError, match="unit file is not an input"):
        matrix_cells([Representation("x", "lexical", "baseline", {"PI": CellSource("other", "bm25", "PI")})],
                     files, {})
    with pytest.raises(ValueError, match="repeat"):
        matrix_cells([Representation("x", "lexical", "baseline", {"PI": CellSource("table2", "bm25", "PI")})] * 2,
                     files, {})
    with pytest.raises(ValueError, match="family"):
        Representation("x", "sparse", "baseline")
    with pytest.raises(ValueError, match="unknown task"):
        Representation("x", "lexical", "baseline", {"MSMARCO": CellSource("t", "r", "m")})

    class Stack:
        def __init__(self, units):
            self.units = units

    with pytest.raises(ValueError, match="share no evaluation unit"):
        common_units([Stack(["a"]), Stack(["b"])])


def test_postings_count_distinct_terms():
    assert postings_size(["a a b", "c"]).bytes_per_document == (2 + 1) / 2 * 8


def test_the_layout_puts_every_works_rows_in_one_matrix_and_sizes_come_from_the_right_files():
    from multivec.rules.representations import matrix_representations, size_sources

    rows = {"nugget_mt_r0.25": {"kind": "nugget", "objective": "mt", "ratio": 0.25},
            "mean_pooled": {"kind": "mean_pooled"}, "bm25": {"kind": "bm25"}}
    reps = matrix_representations(rows, ["nugget_mt_r0.25", "mean_pooled"], "minilm", {"minilm": "minilm"}, True,
                                  ["structural_teacher"], gates={"nugget_mt_r0.25": "ok"})
    by = {r.name: r for r in reps}
    assert set(by) == {"NUGGET MT r=0.25", "minilm mean-pooled", "BM25", "SubEncoder (minilm)", "word Jaccard",
                       "distill: structural_teacher"}
    assert set(by["minilm mean-pooled"].cells) == {"PI", "RR", "Lee", "polarity", "PropSegment"}
    assert by["minilm mean-pooled"].cells["PropSegment"].row == "minilm (untrained, token_subset) [authors]"
    assert set(by["BM25"].cells) == {"PI", "RR"} and by["NUGGET MT r=0.25"].gate == "ok"
    assert by["NUGGET MT r=0.25"].cells["Lee"] == CellSource("table2_document_tasks", "nugget_mt_r0.25",
                                                             "lee_pearson")
    sources = size_sources(rows, reps, lambda name, task: f"enc/{name}/{task}", {"PI": "pi.txt", "RR": "rr.txt"},
                           {"SubEncoder (minilm) [authors]": "sub.json",
                            "word Jaccard (lexical baseline) [authors]": "lexical.json"}, "distill.csv", "minilm")
    assert sources["BM25"]["PI"] == {"kind": "postings", "path": "pi.txt"}
    assert sources["minilm mean-pooled"]["Lee"] == {"kind": "encodings", "path": "enc/mean_pooled/lee",
                                                    "mean_pooled": True}
    assert sources["SubEncoder (minilm)"]["PropSegment"]["path"] == "sub.json"
    assert sources["distill: structural_teacher"]["PI"] == {"kind": "table_dimension", "path": "distill.csv",
                                                           "row": "structural_teacher"}
    # on PropSegment: one vector per proposition, as many per sentence as the SubEncoder's evaluation says
    assert sources["distill: structural_teacher"]["PropSegment"]["vectors_from"] == "sub.json"
    assert "PropSegment" not in sources["word Jaccard"]  # no vectors: its evaluation has no index
    assert "PropSegment" not in sources["minilm mean-pooled"]  # its evaluation JSON was not given
    # Table 1 without the token_subset encoding: no PropSegment cell for the mean-pooled row
    reps = matrix_representations(rows, [], "minilm", {"minilm": "minilm"}, False, [],
                                  subencoder_baselines=["mask_pooling"])
    assert "PropSegment" not in {r.name: r for r in reps}["minilm mean-pooled"].cells


def test_table2_rows_score_on_the_document_tasks_from_their_encodings(tmp_path):
    """document_task_measurements: a multi-vector row's Lee similarity is symmetric MaxSim-mean, a mean-pooled
    row scores the mean of the base token states, BM25 is refused."""
    from multivec.encodings import write_encodings
    from multivec.io import write_jsonl
    from multivec.nugget.tables.table2_rows import document_task_measurements

    rng = np.random.default_rng(5)
    ids = [f"p{k}" for k in range(10)]
    gold = tmp_path / "eval_polarity"
    gold.mkdir()
    write_jsonl(gold / "labels.jsonl", [{"id": i, "label": k % 2} for k, i in enumerate(ids)])
    write_encodings(tmp_path / "enc", ids, [rng.normal(size=(3, 4)) for _ in ids])
    got = document_task_measurements([(tmp_path / "enc", {"name": "colbart", "kind": "token_states"}, None,
                                       "polarity", gold),
                                      (tmp_path / "enc", {"name": "mean_pooled", "kind": "mean_pooled"}, None,
                                       "polarity", gold)])
    assert [(m.row, m.metric, m.seed) for m in got] == [("colbart", "polarity_accuracy", None),
                                                       ("mean_pooled", "polarity_accuracy", None)]
    np.testing.assert_array_equal(got[0].values, got[1].values)  # both classify the mean of the same states
    with pytest.raises(ValueError, match="no vectors"):
        document_task_measurements([(tmp_path / "enc", {"name": "bm25", "kind": "bm25"}, None, "polarity", gold)])


@pytest.mark.e2e
def test_the_smoke_dag_builds_the_matrix_from_the_works_units(smoke_all):
    """`all` builds results/representations.{csv,md,png} at smoke scale: every task has a column, each column is
    on the units every representation in it shares, and a cell is its source's statistic on exactly those units
    (recomputed here from the unit files)."""
    import pandas as pd

    from multivec.statistics import read_units

    work = smoke_all
    cells = pd.read_csv(work / "results/representations.csv")
    assert set(cells["task"]) == {"PI", "RR", "Lee", "polarity", "PropSegment"}
    assert (work / "results/representations.png").stat().st_size > 0
    assert "Pareto front" in (work / "results/representations.md").read_text()
    for task, column in cells.groupby("task"):
        assert column["n_units"].nunique() == 1, task
        assert (column["lo"] <= column["value"] + 1e-9).all() and (column["value"] <= column["hi"] + 1e-9).all()
        assert column["pareto"].any() or column["bytes_per_document"].isna().all(), task
    distill = cells[(cells["task"] == "PropSegment") & (cells["work"] == "distill")]
    assert len(distill) >= 4 and distill["value"].between(0, 100).all()
    bm25 = cells[(cells["representation"] == "BM25") & (cells["task"] == "PI")].iloc[0]
    sources = []
    for source in cells.loc[cells["task"] == "PI", "source"]:
        table, rest = source.split("/", 1)
        sources.append((table, *rest.rsplit("/", 1)))
    by_table = {table: read_units(work / f"results/units/{table}.tables.parquet") for table, *_ in sources}
    (measurement,) = [m for m in by_table["table2"] if m.row == "bm25" and m.metric == "PI"]
    common = set(measurement.units)
    for table, row, metric in sources:
        for m in by_table[table]:
            if m.row == row and m.metric == metric:
                common &= set(m.units)
    kept = [k for k, u in enumerate(measurement.units) if u in common]
    assert bm25["n_units"] == len(kept) and bm25["task_units"] == len(measurement.units)
    assert bm25["value"] == pytest.approx(float(np.mean(measurement.values[kept, 0])))
