"""Table 3 (C-STS) assembly in multivec.subencoder.tables.paper_tables: the paper's row is looked up from the backbone's
family, the table carries ours beside it, and the workflow script only calls this."""
from pathlib import Path

import pandas as pd
import pytest
import yaml

from multivec.subencoder.tables.paper_tables import PAPER_TABLE3, paper_table3, table3, table3_family, write_table

ROOT = Path(__file__).resolve().parents[1]


def backbones(config: str) -> dict[str, dict]:
    data = yaml.safe_load((ROOT / "config" / config).read_text())
    return {b["name"]: b for b in data["subencoder"]["model"]["backbones"]}


def test_paper_scale_backbones_find_their_table3_family_and_the_demo_has_none():
    paper = backbones("paper.yaml")
    assert {name: table3_family(b) for name, b in paper.items()} == {"st5_base": "ST5", "gtr_base": "GTR",
                                                                     "simcse": "SimCSE"}
    assert [table3_family(b) for b in backbones("config.yaml").values()] == [None]
    for llm in ("gpt-3.5-turbo", "gpt-4"):
        for backbone in paper.values():
            assert paper_table3(llm, backbone) == PAPER_TABLE3[(llm, table3_family(backbone))]
    assert paper_table3("llama-3", paper["gtr_base"]) is None  # an LLM the paper did not use


def test_a_backbone_naming_two_families_is_an_error_naming_it():
    with pytest.raises(ValueError, match=r"'gtr_vs_st5'.*GTR.*ST5"):
        table3_family({"name": "gtr_vs_st5", "encoder": "x"})


def test_table3_rows_and_files(tmp_path):
    paper = backbones("paper.yaml")
    demo = backbones("config.yaml")["minilm"]
    counts = {"pairs": 4, "llm_calls": 8, "fallback_whole_sentence": 1}
    rows = [{"llm": "gpt-4", "backbone": paper["st5_base"], "spearman_x100": 12.3456, "counts": counts},
            {"llm": "gpt-4", "backbone": demo, "spearman_x100": -3.0, "counts": counts}]
    df = table3(rows)
    assert list(df["subencoder"]) == ["st5_base", "minilm"]
    assert list(df["spearman_x100"]) == [12.35, -3.0]
    assert df["paper_spearman_x100"].iloc[0] == PAPER_TABLE3[("gpt-4", "ST5")]
    assert pd.isna(df["paper_spearman_x100"].iloc[1]) and df["paper_family"].iloc[1] == ""
    assert list(df["fallback_whole_sentence"]) == [1, 1]
    write_table(df, tmp_path / "t3.csv", tmp_path / "t3.md", "Table 3: C-STS", ["4 C-STS pairs."])
    assert pd.read_csv(tmp_path / "t3.csv")["paper_spearman_x100"].iloc[0] == PAPER_TABLE3[("gpt-4", "ST5")]
    md = (tmp_path / "t3.md").read_text()
    assert md.startswith("# Table 3: C-STS") and "| gpt-4 | st5_base | 12.35 | ST5 |" in md


def test_workflow_script_takes_the_paper_numbers_from_tables_only():
    script = (ROOT / "workflow" / "scripts" / "subencoder_eval_csts.py").read_text()
    assert "table3(" in script and "PAPER_TABLE3" not in script and "SimCSE" not in script
