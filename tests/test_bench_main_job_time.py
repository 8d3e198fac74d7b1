"""benchmarks/main_job_time.py without running the main job: it refuses what it cannot measure before cloning, it
sums this run's benchmark files per rule (and only this run's), it names the committed results a run rewrote with
other bytes, and its figure draws. Never timing."""

from __future__ import annotations

import os
import subprocess

import pytest
from benchmark_scripts import load_benchmark

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\tjobid\trule_name\twildcards"


def _benchmark_file(path, seconds, rss, cpu, rule, wildcards="{}", mtime=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{HEADER}\n{seconds}\t0:00:01\t{rss}\t1\t1\t1\t0\t0\t50\t{cpu}\t1\t{rule}\t{wildcards}\n")
    if mtime is not None:
        os.utime(path, (mtime, mtime))


def _git_repo(folder):
    folder.mkdir()
    (folder / ".venv" / "bin").mkdir(parents=True)
    (folder / ".venv" / "bin" / "snakemake").write_text("")
    for command in (["init", "-q"], ["config", "user.email", "t@t"], ["config", "user.name", "t"]):
        subprocess.run(["git", *command], cwd=folder, check=True)
    return folder


def test_rule_rows_sum_each_rules_jobs_of_this_run_only(tmp_path):
    bench = load_benchmark("main_job_time")
    folder = tmp_path / "benchmarks"
    _benchmark_file(folder / "rules/train/a.tsv", 100.0, 900.0, 95.0, "train_nugget", "{'variant': 'base_r1'}")
    _benchmark_file(folder / "rules/train/b.tsv", 40.0, 1200.0, 38.0, "train_nugget", "{'variant': 'r0.1'}")
    _benchmark_file(folder / "rules/encode/c.tsv", 60.0, 500.0, 59.0, "encode_task")
    _benchmark_file(folder / "rules/old.tsv", 999.0, 1.0, 1.0, "train_nugget", mtime=1_000_000)  # a run before
    rows = bench.rule_rows(folder, since=2_000_000)
    assert [r["rule"] for r in rows] == ["train_nugget", "encode_task"]
    train = rows[0]
    assert (train["jobs"], train["total_s"], train["mean_s"], train["max_s"], train["peak_rss_mb"],
            train["cpu_time_s"]) == (2, 140.0, 70.0, 100.0, 1200.0, 133.0)
    assert train["slowest_job"] == "variant=base_r1" and rows[1]["slowest_job"] == "encode_task"
    whole = bench.whole_run(rows)
    assert (whole["jobs"], whole["total_s"], whole["max_s"], whole["peak_rss_mb"], whole["cpu_time_s"]) == \
        (3, 200.0, 100.0, 1200.0, 192.0)


def test_a_benchmark_file_without_its_rule_name_is_refused(tmp_path):
    bench = load_benchmark("main_job_time")
    path = tmp_path / "benchmarks" / "x.tsv"
    path.parent.mkdir(parents=True)
    path.write_text("s\th:m:s\tmax_rss\n1.0\t0:00:01\t10\n")
    with pytest.raises(SystemExit, match="without its rule's name"):
        bench.rule_rows(tmp_path / "benchmarks", since=0)


def test_rewritten_results_names_committed_files_with_other_bytes_only(tmp_path):
    bench = load_benchmark("main_job_time")
    repo = _git_repo(tmp_path / "repo")
    (repo / "results").mkdir()
    for name in ("same.csv", "changed.csv"):
        (repo / "results" / name).write_text("a,b\n1,2\n")
    subprocess.run(["git", "add", "results"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "x"], cwd=repo, check=True)
    (repo / "results" / "same.csv").write_text("a,b\n1,2\n")  # rewritten with the same bytes
    (repo / "results" / "changed.csv").write_text("a,b\n1,3\n")
    (repo / "results" / "new.csv").write_text("c\n")  # not committed: not a change of a committed result
    assert bench.rewritten_results(repo) == ["results/changed.csv"]


def test_what_cannot_be_measured_stops_before_cloning(tmp_path):
    bench = load_benchmark("main_job_time")
    repo = _git_repo(tmp_path / "repo")
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    with pytest.raises(SystemExit, match="not a git checkout"):
        bench.check_request(tmp_path, tmp_path / "w", str(mirror))
    used = tmp_path / "used"
    used.mkdir()
    (used / "file").write_text("")
    with pytest.raises(SystemExit, match="is not empty"):
        bench.check_request(repo, used, str(mirror))
    with pytest.raises(SystemExit, match="MULTIVEC_DATA_MIRROR is not set"):
        bench.check_request(repo, tmp_path / "w", None)
    with pytest.raises(SystemExit, match="is not a folder"):
        bench.check_request(repo, tmp_path / "w", str(tmp_path / "nowhere"))
    (repo / ".venv" / "bin" / "snakemake").unlink()
    with pytest.raises(SystemExit, match="has no snakemake"):
        bench.check_request(repo, tmp_path / "w", str(mirror))
    bench.check_request(_git_repo(tmp_path / "ok"), tmp_path / "w", str(mirror))  # all there: no error
    assert not (tmp_path / "w").exists()


def test_the_figure_draws_the_largest_rules(tmp_path):
    bench = load_benchmark("main_job_time")
    rows = [{"rule": f"rule_{i}", "jobs": i + 1, "total_s": 100.0 - i} for i in range(12)]
    whole = {"target": "results/table2.csv", "wall_s": 2242.0, "jobs": 78, "total_s": 4323.0,
             "scheduler_cpu_s": 300.0, "cpu": "some CPU (2 cores)"}
    bench.plot(rows, whole, tmp_path / "main_job.png")
    assert (tmp_path / "main_job.png").stat().st_size > 0
