"""The figures' rows and per-seed files (multivec.rules.nugget_figures)."""

import pytest

from multivec.rules.nugget_figures import GAIN_FILE, NuggetFigures
from rules_configs import scale_config, seed_sets


@pytest.fixture(scope="module")
def figures():
    config = scale_config("demo")
    return NuggetFigures(config, seed_sets(config))


def test_rows_as_the_folders_spell_the_ratios(figures):
    config = scale_config("demo")
    assert figures.ratios == [str(r) for r in config["nugget_analysis"]["ratios"]]
    assert figures.long_rows() == [f"{o}_r{r}" for o in config["nugget_analysis"]["objectives"]
                                   for r in figures.ratios]


def test_fig4_files(figures):
    tables = figures.fig4_hypothesis_files("tables")
    assert len(tables) == len(figures.long_rows())  # one table seed
    path, row, seed, objective = tables[0]
    assert path == f"results/nugget_analysis/bleu/{row}/seed{seed}.jsonl" and row.startswith(objective + "_r")
    claims = figures.fig4_hypothesis_files("claims")
    claimed = figures.seeds.claimed_rows("nugget_fig4")
    assert {row for _, row, _, _ in claims} == claimed & set(figures.long_rows())
    assert {seed for _, _, seed, _ in claims} <= {13, 14, 15}


def test_fig5_and_gain_files(figures):
    files = figures.fig5_document_files("tables", "0.1")
    assert [(row, seed) for _, row, seed in files] == [(o, 13) for o in figures.objectives]
    assert files[0][0] == f"results/nugget_analysis/selected_tokens/{figures.objectives[0]}_r0.1/seed13.jsonl"
    gains = figures.gain_files("tables", [64, 128])
    assert gains == [(GAIN_FILE.format(seed=13, length=64), "len64", 13),
                     (GAIN_FILE.format(seed=13, length=128), "len128", 13)]
    claimed = figures.seeds.claimed_rows("nugget_fig7_8")
    assert {row for _, row, _ in figures.gain_files("claims", [64, 128])} == claimed & {"len64", "len128"}
