"""The students' metrics.csv shows whether every loss term falls
(multivec.distill.analysis.loss_curves)."""

import pandas as pd
import pytest

from multivec.distill.analysis.loss_curves import (first_last, loss_trends, plot_loss_curves, read_curves, read_runs,
                                                   write_loss_curves)

HEADER = ("step,train_loss,train_structural,train_contextual,train_soft_cca_mse,train_sdl_student,"
          "train_sdl_teacher,train_mask_share,dev_loss,documents_per_s,elapsed_s\n")


def metrics_file(path, rows):
    path.write_text(HEADER + "".join(",".join("" if v is None else str(v) for v in row) + "\n" for row in rows))
    return str(path)


@pytest.fixture
def runs(tmp_path):
    # L_C only: contextual falls, sdl_student rises, no structural term; both: everything falls
    lc = metrics_file(tmp_path / "lc.csv", [
        (step, 1.0 - 0.05 * i, None, 1.0 - 0.05 * i, 0.8 - 0.05 * i, 0.1 + 0.02 * i, 0.5 - 0.01 * i, 1.0,
         0.9 if step == 10 else None, 50, step) for i, step in enumerate(range(2, 22, 2))])
    both = metrics_file(tmp_path / "both.csv", [
        (step, 2.0 - 0.1 * i, 1.0 - 0.05 * i, 1.0 - 0.05 * i, 0.8, 0.3 - 0.01 * i, 0.5 - 0.01 * i, 0.5, None, 50,
         step) for i, step in enumerate(range(2, 22, 2))])
    return [{"row": "student_lc_soft_cca", "seed": 13, "metrics": lc},
            {"row": "student_ls_cosine+lc_soft_cca", "seed": 13, "metrics": both}]


def test_first_last_means_the_ends_and_rejects_bad_shares():
    assert first_last([5.0, 4.0, 3.0, 2.0, 1.0], 0.2) == (5.0, 1.0)
    assert first_last(list(map(float, range(10))), 0.2) == (0.5, 8.5)
    assert first_last([3.0], 0.2) == (3.0, 3.0)
    with pytest.raises(ValueError, match="share"):
        first_last([1.0, 2.0], 0.9)
    with pytest.raises(ValueError, match="no logged values"):
        first_last([], 0.2)


def test_loss_trends_name_the_terms_that_rise_and_skip_absent_ones(runs):
    trends = loss_trends(read_runs(runs), 0.2)
    lc = trends[trends["row"] == "student_lc_soft_cca"].set_index("term")
    assert "train_structural" not in lc.index  # the L_C run has no L_S: an empty column, not a flat zero
    assert "train_mask_share" not in set(trends["term"])  # a property of the batches, not a loss
    assert "dev_loss" not in lc.index  # one evaluated window: no trend
    assert lc.loc["train_contextual", "fell"] and not lc.loc["train_sdl_student", "fell"]
    assert lc.loc["train_contextual", "first"] == pytest.approx(0.975)  # mean of the first 2 of 10 windows
    assert lc.loc["train_contextual", "last"] == pytest.approx(0.575)
    assert lc.loc["train_contextual", "change"] == pytest.approx(0.575 - 0.975)
    both = trends[trends["row"] == "student_ls_cosine+lc_soft_cca"].set_index("term")
    assert not both.loc["train_soft_cca_mse", "fell"]  # flat is not falling
    assert both.loc["train_structural", "fell"] and both.loc["train_loss", "fell"]


def test_write_loss_curves_writes_table_markdown_and_figure(tmp_path, runs):
    csv, md, png = tmp_path / "c.csv", tmp_path / "c.md", tmp_path / "c.png"
    write_loss_curves(runs, csv, md, png, share=0.2, note="Scale demo")
    table = pd.read_csv(csv)
    assert list(table.columns) == ["row", "seed", "term", "windows", "first", "last", "change", "fell"]
    text = md.read_text()
    assert "Scale demo" in text
    assert "student_lc_soft_cca seed 13: train_sdl_student" in text
    assert "student_ls_cosine+lc_soft_cca seed 13: train_soft_cca_mse" in text
    assert png.stat().st_size > 5000


def test_a_file_that_is_not_a_metrics_file_is_refused(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="not a training metrics file"):
        read_curves(bad)
    with pytest.raises(ValueError, match="no trained student"):
        write_loss_curves([], tmp_path / "x.csv", tmp_path / "x.md", tmp_path / "x.png")


def test_a_run_keeps_its_colour_in_every_panel(tmp_path, runs):
    """The L_C run has no L_S panel; its colour must not shift to the next run's there (a drawn defect)."""
    drawn = plot_loss_curves(read_runs(runs), tmp_path / "c.png")
    colours = {}
    for term, lines in drawn.items():
        for label, colour in lines.items():
            assert colours.setdefault(label, colour) == colour, (term, label)
    assert set(drawn["train_structural"]) == {"ls_cosine+lc_soft_cca s13"}
    assert len(set(colours.values())) == len(colours) == 2
