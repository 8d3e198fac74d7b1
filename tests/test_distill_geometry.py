"""multivec.distill.analysis.geometry: the mean pairwise cosine and the agreement with each teacher of every row."""

import numpy as np
import pandas as pd
import pytest

from multivec.distill.embeddings import write_embeddings
from multivec.distill.analysis.geometry import geometry_measurements, pair_cosines, write_geometry

STATS = {"alpha": 0.05, "confidence": 0.95, "bootstrap_resamples": 200, "permutation_resamples": 300}


def test_pair_cosines_are_the_upper_triangle_of_the_cosine_matrix():
    v = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    assert pair_cosines(v) == pytest.approx([0.0, 1 / np.sqrt(2), 1 / np.sqrt(2)])
    with pytest.raises(ValueError, match="zero embedding"):
        pair_cosines(np.array([[0.0, 0.0], [1.0, 0.0]]))


@pytest.fixture
def entries(tmp_path):
    rng = np.random.default_rng(0)
    ids = [f"doc{i}" for i in range(25)]
    structural = rng.normal(size=(25, 8))
    contextual = rng.normal(size=(25, 4))
    rows = {"structural_teacher": structural, "contextual_teacher": contextual,
            "student_untrained": structural + rng.normal(0, 1.0, size=(25, 8)),
            "student_copy": structural.copy(),  # imitates the structural teacher exactly
            "student_collapsed": structural + 6.0}  # a common direction added to every document
    kinds = {"structural_teacher": "structural_teacher", "contextual_teacher": "contextual_teacher",
             "student_untrained": "untrained_student"}
    out = []
    for name, vectors in rows.items():
        folder = tmp_path / name / "eval_lee"
        order = rng.permutation(len(ids))  # each folder in its own order: rows are aligned by id
        write_embeddings(folder, [ids[k] for k in order], vectors[order], {"model": name})
        out.append({"name": name, "kind": kinds.get(name, "student"), "seed": None if name in kinds else 13,
                    "embeddings": {"lee": str(folder)}})
    return out


def test_agreement_and_mean_cosine_tell_imitation_from_collapse(entries):
    values = {(m.row, m.metric): m for m in geometry_measurements(entries, ["lee"])}
    agreement = {row: np.corrcoef(values[(row, "lee_agreement_structural")].values.T)[0, 1]
                 for row in ("student_copy", "student_untrained", "student_collapsed")}
    assert agreement["student_copy"] == pytest.approx(1.0)
    assert agreement["student_untrained"] < 0.9
    mean = {row: values[(row, "lee_mean_cosine")].values.mean() for row in ("student_untrained",
                                                                          "student_collapsed")}
    assert mean["student_collapsed"] > 0.9 > abs(mean["student_untrained"])
    assert len(values[("student_copy", "lee_mean_cosine")].units) == 25 * 24 // 2


def test_write_geometry_has_intervals_and_compares_every_student_with_the_untrained_one(entries, tmp_path):
    csv, md, tests = tmp_path / "g.csv", tmp_path / "g.md", tmp_path / "g_tests.csv"
    write_geometry(entries, ["lee"], STATS, csv, md, tests, note="Scale test")
    frame = pd.read_csv(csv).set_index("row")
    for metric in ("lee_mean_cosine", "lee_agreement_structural", "lee_agreement_contextual"):
        assert (frame[f"{metric}_lo"] <= frame[metric] + 1e-9).all()
        assert (frame[metric] <= frame[f"{metric}_hi"] + 1e-9).all()
    assert frame.loc["student_copy", "lee_agreement_structural"] == pytest.approx(1.0)
    compared = pd.read_csv(tests)
    assert set(compared["row"]) == {"student_copy", "student_collapsed"}
    assert set(compared["against"]) == {"student_untrained"}
    collapsed = compared[(compared["row"] == "student_collapsed") & (compared["metric"] == "lee_mean_cosine")]
    assert collapsed["difference"].iloc[0] > 0.5 and collapsed["p"].iloc[0] < 0.01
    assert "Scale test" in md.read_text()


def test_geometry_needs_both_teachers_and_an_untrained_row(entries, tmp_path):
    with pytest.raises(ValueError, match="one contextual_teacher row"):
        geometry_measurements([e for e in entries if e["kind"] != "contextual_teacher"], ["lee"])
    with pytest.raises(ValueError, match="no untrained student"):
        write_geometry([e for e in entries if e["kind"] != "untrained_student"], ["lee"], STATS,
                       tmp_path / "a.csv", tmp_path / "a.md", tmp_path / "a_tests.csv")
