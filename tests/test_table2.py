"""Table 2 assembly: paper numbers beside ours, CSV and markdown outputs."""

import os
from pathlib import Path

import pandas as pd
import pytest
import yaml

from multivec.nugget.tables.table2 import PAPER_TABLE2, TABLE2_COLUMNS, assemble_table2, paper_row, write_table2
from multivec.nugget.tables.table2_rows import table2_record

REPO = Path(__file__).resolve().parents[1]

ROWS = [
    {"model": "NUGGET", "objective": "MT", "ratio": 0.1, "multi_vector": True, "PI": 91.2, "RR": 40.5,
     "vectors_per_doc": 25.3, "n_queries_PI": 1024, "n_queries_RR": 121, "train_steps": 300},
    {"model": "nugget", "objective": "AE", "ratio": 0.25, "multi_vector": True, "PI": 90.0, "RR": 41.0},
    {"model": "ColBART", "objective": "MT", "multi_vector": True, "PI": 93.0, "RR": 45.0},
    {"model": "TSDAE", "objective": "AE", "multi_vector": False, "PI": 88.0, "RR": 39.0, "train_steps": 300},
    {"model": "BM25", "multi_vector": False, "PI": 98.49, "n_queries_PI": 1024},
]


def test_published_numbers_we_rely_on():
    assert paper_row("NUGGET", "MT", 0.1) == {"model": "NUGGET", "objective": "MT", "ratio": 0.1,
                                              "PI": 96.69, "RR": 50.04}
    assert paper_row("TSDAE", "AE", None)["PI"] == 95.59 and paper_row("TSDAE", "AE", None)["RR"] == 50.48
    assert paper_row("ColBART", None, None)["RR"] == 52.44
    assert paper_row("NUGGET", "MT", 0.25)["RR"] == 56.51 and paper_row("TSDAE", "MT", None)["PI"] == 95.04
    assert paper_row("NUGGET", "AE", 0.1) is None and paper_row("NUGGET", "MT", 0.2) is None
    assert paper_row("mean-pooled", None, None) is None and paper_row("BM25", None, None) is None
    assert len(PAPER_TABLE2) == 8
    assert all({"model", "objective", "ratio", "PI", "RR"} <= set(row) for row in PAPER_TABLE2)


def _paper_text_table2():
    """(model, PI, RR) of the rows of Table 2 in the paper's text, or skip when the text is not here."""
    folder = os.environ.get("MULTIVEC_PAPERS") or (
        str(Path(os.environ["MULTIVEC_DATA_MIRROR"]).parent / "papers") if os.environ.get("MULTIVEC_DATA_MIRROR") else "")
    path = Path(folder) / "nugget_qin_vandurme_icml2023.txt"
    if not folder or not path.is_file():
        pytest.skip("the paper's text is not available ($MULTIVEC_PAPERS or <mirror>/../papers)")
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.split("\t")[1:3] == ["ratio", "obj."])
    rows, model = [], None
    for line in lines[start + 1:]:
        if not line.strip():
            break
        fields = line.split("\t")
        model = fields[0] or model
        rows.append((model, float(fields[-2]), float(fields[-1])))
    return rows


def test_paper_table2_is_copied_from_the_paper_text():
    assert _paper_text_table2() == [(row["model"], row["PI"], row["RR"]) for row in PAPER_TABLE2]


def test_every_paper_row_maps_to_one_row_of_the_demo_config():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    metrics = {task: {"mrr": 0.0, "n_queries": 1} for task in ("pi", "rr")}
    matched = {}
    for row in config["table2"]["rows"]:
        record = table2_record(row, metrics, None)
        paper = paper_row(record["model"], record["objective"], record["ratio"])
        if row["kind"] in ("nugget", "tsdae", "token_states"):
            assert paper is not None, f"demo row {row['name']} has no paper row"
        if paper is not None:
            matched.setdefault(PAPER_TABLE2.index(paper), []).append(row["name"])
    assert sorted(matched) == list(range(len(PAPER_TABLE2))), f"paper rows without a demo row: {matched}"
    assert all(len(names) == 1 for names in matched.values()), matched


def test_assemble_fills_paper_columns_by_model_objective_ratio():
    df = assemble_table2(ROWS)
    assert list(df.columns) == TABLE2_COLUMNS and len(df) == 5
    assert df.loc[0, "paper_PI"] == 96.69 and df.loc[0, "paper_RR"] == 50.04
    assert df.loc[1, "paper_PI"] == 92.30 and df.loc[1, "paper_RR"] == 44.81  # NUGGET AE 0.25 ("nugget": any case)
    assert df.loc[2, "paper_PI"] == 94.83                      # ColBART: any objective
    assert df.loc[3, "paper_RR"] == 50.48
    assert pd.isna(df.loc[4, "paper_PI"]) and pd.isna(df.loc[4, "RR"])
    with pytest.raises(ValueError, match="unknown column"):
        assemble_table2([{"model": "NUGGET", "PI_score": 1.0}])
    with pytest.raises(ValueError, match="unknown column"):
        assemble_table2([{"model": "NUGGET", "paper_PI": 1.0}])


def test_write_table2_csv_and_markdown(tmp_path):
    df = assemble_table2(ROWS)
    scale = "Scale: smoke; PI: released dev set; RR: WikiText-2 valid+test; base model: tiny-random-mbart."
    write_table2(df, tmp_path / "t2.csv", tmp_path / "t2.md", scale)
    back = pd.read_csv(tmp_path / "t2.csv")
    assert list(back.columns) == TABLE2_COLUMNS
    assert back.loc[0, "PI"] == 91.2 and back.loc[0, "paper_PI"] == 96.69
    markdown = (tmp_path / "t2.md").read_text()
    assert scale in markdown
    assert "| NUGGET | MT | 0.1 | yes | 91.20 | 40.50 | 96.69 | 50.04 | 25.3 | 1024 | 121 | 300 |" in markdown
    assert "Training: NUGGET MT r=0.1: 300 steps; TSDAE AE: 300 steps." in markdown
    assert " min" not in markdown  # no wall-clock figure: the table is byte-identical across runs
    with pytest.raises(ValueError, match="columns"):
        write_table2(df.drop(columns=["RR"]), tmp_path / "x.csv", tmp_path / "x.md", scale)
