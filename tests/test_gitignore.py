"""Large intermediate tensors under results/ stay out of git (the LM's cached history memories moved into
per-row folders, where the old top-level pattern no longer ignored them: 18 MB each)."""

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="needs a git checkout")
@pytest.mark.parametrize("path, ignored", [
    ("results/nugget_lm/nugget_r0.1/seed13.history.safetensors", True),
    ("results/nugget_lm/nugget_r0.1/seed13.json", False),
    # the tables read the metrics JSONs (committed, so that a clone re-renders them), not the rankings
    ("results/nugget_table4/random/seed13/pi.json", False),
    ("results/nugget_table4/random/seed13/pi.rankings.jsonl", True),
    ("results/table2/nugget_ae_r0.1/seed13/rr.json", False),
    ("results/table2/nugget_ae_r0.1/seed13/rr.rankings.jsonl", True),
    ("results/inputs/models/nugget/ae/r0.1/seed13/training_summary.json", False),
    ("results/table2.csv", False),
    ("results/subencoder/retrieval/subencoder_minilm_full/seed13.rankings.jsonl", True),  # 2 MB each
    ("results/subencoder/retrieval/subencoder_minilm_full/seed13.json", False),
    ("rehearsal/run/results/table2.csv", True),  # scripts/slurm/rehearse_on_local_slurm.sh's default folder
])
def test_results_gitignore(path, ignored):
    result = subprocess.run(["git", "check-ignore", "-q", path], cwd=REPO)
    assert (result.returncode == 0) == ignored, f"{path}: expected {'ignored' if ignored else 'tracked'}"


def test_pytest_keeps_the_tmp_folders_of_failed_tests_only():
    """The end-to-end tests write GBs under tmp_path; a CI run on a machine whose disk they filled failed at its
    next `pip install` (ENOSPC), before any test ran."""
    import tomllib

    options = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert options["tmp_path_retention_policy"] == "failed"
