"""Two claims files side by side (multivec.statistics.claims_diff): changed verdicts found and marked, claims in
one file only shown as absent, differences with their CIs, and bad input refused with the file named."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from multivec.statistics.claims import VERDICTS
from multivec.statistics.claims_diff import ABSENT, changes_markdown, main, verdict_changes

ROOT = Path(__file__).resolve().parents[1]


def _write(path, rows):
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _before(tmp_path):
    return _write(tmp_path / "before.csv", [
        {"id": "N1", "claim": "at least as good", "difference": -0.68, "difference_lo": -1.29,
         "difference_hi": -0.13, "verdict": "contradicted"},
        {"id": "N2", "claim": "rises with r", "difference": 2.47, "difference_lo": 1.78, "difference_hi": 3.18,
         "verdict": "contradicted"},
        {"id": "S9", "claim": "dropped later", "difference": None, "difference_lo": None, "difference_hi": None,
         "verdict": "holds"}])


def _after(tmp_path):
    return _write(tmp_path / "after.csv", [
        {"id": "N1", "claim": "at least as good", "difference": -0.68, "difference_lo": -1.43,
         "difference_hi": 0.08, "verdict": "inconclusive", "decided_by": "PI: not_worse"},
        {"id": "N2", "claim": "rises with r", "difference": 2.47, "difference_lo": 1.70, "difference_hi": 3.20,
         "verdict": "contradicted", "decided_by": "RR: r = 0.05 -> 0.1"},
        {"id": "N12", "claim": "new claim", "difference": 1.0, "difference_lo": None, "difference_hi": None,
         "verdict": "holds", "decided_by": ""}])


def test_changed_verdicts_are_found_and_claims_of_one_file_are_absent_in_the_other(tmp_path):
    changes = verdict_changes(_before(tmp_path), _after(tmp_path)).set_index("id")
    assert list(changes.index) == ["N1", "N2", "N12", "S9"]
    assert changes.loc["N1", ["verdict_before", "verdict_after"]].tolist() == ["contradicted", "inconclusive"]
    assert changes["changed"].to_dict() == {"N1": True, "N2": False, "N12": True, "S9": True}
    assert changes.loc["N12", "verdict_before"] == ABSENT and changes.loc["S9", "verdict_after"] == ABSENT
    assert changes.loc["N1", "difference_before"] == "-0.68 [-1.29, -0.13]"
    assert changes.loc["N1", "difference_after"] == "-0.68 [-1.43, 0.08]"
    assert changes.loc["N12", "difference_after"] == "+1.00"  # no CI written: none shown
    assert changes.loc["S9", "difference_before"] == ""
    assert changes.loc["N2", "decided_by_after"] == "RR: r = 0.05 -> 0.1"


def test_markdown_marks_changes_and_can_list_only_them(tmp_path):
    changes = verdict_changes(_before(tmp_path), _after(tmp_path))
    text = changes_markdown(changes)
    assert text.startswith("3 of 4 verdicts changed.")
    assert "| N1 | contradicted | **inconclusive** |" in text
    assert "| N2 | contradicted | contradicted |" in text
    only = changes_markdown(changes, changed_only=True)
    assert "| N2 |" not in only and "| N1 |" in only


def test_the_committed_claims_table_against_itself_changes_nothing():
    changes = verdict_changes(ROOT / "results/claims.csv", ROOT / "results/claims.csv")
    assert len(changes) > 20 and not changes["changed"].any()
    assert set(changes["verdict_after"]) <= set(VERDICTS)


def test_bad_input_is_refused_with_the_file_named(tmp_path, capsys):
    good = _before(tmp_path)
    with pytest.raises(FileNotFoundError, match="nowhere.csv"):
        verdict_changes(tmp_path / "nowhere.csv", good)
    no_verdict = _write(tmp_path / "table2.csv", [{"id": "x", "MRR": 1.0}])
    with pytest.raises(ValueError, match=r"table2.csv: not a claims table.*\['verdict'\]"):
        verdict_changes(good, no_verdict)
    twice = _write(tmp_path / "twice.csv", [{"id": "N1", "verdict": "holds"}, {"id": "N1", "verdict": "holds"}])
    with pytest.raises(ValueError, match=r"twice.csv: claim id\(s\) \['N1'\] appear more than once"):
        verdict_changes(good, twice)
    assert main([str(good), str(no_verdict)]) == 2
    assert "table2.csv: not a claims table" in capsys.readouterr().err


def test_the_command_line_writes_the_table(tmp_path):
    out = tmp_path / "changes.md"
    assert main([str(_before(tmp_path)), str(_after(tmp_path)), "--changed-only", "--out", str(out)]) == 0
    assert out.read_text().startswith("3 of 4 verdicts changed.")
