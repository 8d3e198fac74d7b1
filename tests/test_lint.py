"""Pyflakes over the project's Python (ruff's F rules, configured in pyproject.toml): unused imports and
variables, undefined names, f-strings without placeholders. Each was found in the code once (in a
review): an ``import torch`` left in a rule script loads torch for nothing, and an undefined name only
fails when its line runs."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ["src", "workflow", "scripts", "benchmarks", "tests"]


def test_pyflakes_finds_nothing():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise",
                             *CHECKED], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_lint_configuration_checks_pyflakes_rules(tmp_path):
    # A lint that selects nothing passes everything: check that the configured rules catch a known defect.
    sample = tmp_path / "sample.py"
    sample.write_text('import os\n\nprint(f"no placeholder")\nprint(undefined_name)\n')
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise",
                             "--config", str(ROOT / "pyproject.toml"), str(sample)],
                            capture_output=True, text=True)
    found = {code for code in ("F401", "F541", "F821") if code in result.stdout}
    assert result.returncode == 1 and found == {"F401", "F541", "F821"}, result.stdout + result.stderr
