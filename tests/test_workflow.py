"""The Snakemake DAG as a user meets it: lint, config validation, dry runs at every scale,
and a smoke-scale end-to-end run of results/table2.csv in a temporary directory."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
WORKFLOW_PARTS = ["Snakefile", "rules", "workflow", "config", "profiles", "envs", "src"]


def snakemake(*args, cwd=REPO, env_extra=None, timeout=600):
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    env.update(env_extra or {})
    return subprocess.run([SNAKEMAKE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_lint_is_clean():
    result = snakemake("--lint")
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "Congratulations" in out, out


@pytest.mark.parametrize(
    "overrides, expected",
    [
        ("table2: {rows: [{name: x, kind: nugget, objective: mt, ratio: 0}]}", "ratio"),
        ("table2: {rows: [{name: x, kind: nugget, objective: mt, ratio: 1.5}]}", "ratio"),
        ("nugget: {scorer_layr: 3}", "scorer_layr"),
        ("train: {max_steps: many}", "max_steps"),
        ("data_mirror: /nonexistent/mirror", "data_mirror"),
    ],
)
def test_bad_config_stops_before_any_job(tmp_path, overrides, expected):
    bad = tmp_path / "bad.yaml"
    bad.write_text(overrides + "\n")
    result = snakemake("-n", "--configfile", str(bad), env_extra={"MULTIVEC_DATA_MIRROR": ""})
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert expected in out, out
    assert "Job stats" not in out, out


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--configfile", "config/smoke.yaml"],
        ["--profile", "profiles/slurm", "--configfile", "config/paper.yaml"],
    ],
    ids=["demo", "smoke", "paper-slurm"],
)
def test_dry_run_every_scale(args, mirror, tmp_path):
    # An empty working directory: the whole DAG, whatever this checkout has built already.
    result = snakemake("-n", *args, "--directory", str(tmp_path), "results/table2.csv")
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    for rule in ("train_nugget", "train_tsdae", "evaluate_ranking", "table2"):
        assert rule in out, f"{rule} missing from the DAG:\n{out}"


@pytest.mark.e2e
def test_smoke_end_to_end(tmp_path, mirror):
    work = tmp_path / "wf"
    work.mkdir()
    for part in WORKFLOW_PARTS:
        src = REPO / part
        (shutil.copytree if src.is_dir() else shutil.copy)(src, work / part)
    args = ("--configfile", "config/smoke.yaml", "--cores", "2", "results/table2.csv")
    result = snakemake(*args, cwd=work, timeout=1500)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-5000:]

    table = pd.read_csv(work / "results/table2.csv")
    assert list(table.columns) == ["model", "objective", "ratio", "multi_vector", "PI", "RR", "paper_PI",
                                   "paper_RR", "vectors_per_doc", "n_queries_PI", "n_queries_RR",
                                   "train_steps", "train_minutes"]
    assert len(table) == 10
    assert table["PI"].between(0, 100).all() and table["RR"].between(0, 100).all()
    assert (table["n_queries_PI"] == 12).all() and (table["n_queries_RR"] == 8).all()
    trained = table[table["model"].str.startswith(("NUGGET", "TSDAE"))]
    assert len(trained) == 7 and (trained["train_steps"] == 6).all()
    # A row the paper has carries its published number beside ours.
    assert table["paper_PI"].notna().any()
    assert (work / "results/table2.md").read_text().count("\n") > 10

    # Every artifact the DAG wrote can be inspected.
    for artifact in ["data/built/corpora/autoencoding/train.jsonl", "data/built/tasks/pi",
                     "results/table2/nugget_mt_r0.1/pi.rankings.jsonl", "data/encodings/nugget_mt_r0.1/pi",
                     "models/nugget/mt_r0.1", "results/table2.csv"]:
        shown = subprocess.run([sys.executable, "-m", "multivec", "inspect", str(work / artifact)],
                               capture_output=True, text=True)
        assert shown.returncode == 0 and shown.stdout.strip(), (artifact, shown.stderr)

    # A second run of the same target schedules nothing.
    again = snakemake("-n", *args, cwd=work)
    assert again.returncode == 0
    assert "Nothing to be done" in again.stdout + again.stderr, again.stdout
