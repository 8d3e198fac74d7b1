"""The main job from a fresh clone: its wall time, where the time goes per rule, and what the scheduler costs.

Clones this repository's HEAD with ``git clone`` (so file times are a checkout's, as a user's clone has them)
into ``--workdir``, links the installed virtual environment into it as ``.venv`` (the install is timed on its
own, docs/benchmarks.md), and runs the README's main command there, ``snakemake --cores all
results/table2.csv``, with the data mirror from ``MULTIVEC_DATA_MIRROR``. It records:

- the run's wall time and the sum of its jobs' seconds (from the ``benchmark:`` files the run wrote);
- the Snakemake process's own CPU time, i.e. its scheduler (read from /proc while it runs; the jobs are its
  children and are not counted), which ``scheduler_polling.py`` measures on a synthetic workflow;
- one row per rule: jobs, summed and slowest seconds, peak RSS, CPU seconds;
- which committed results files the run rewrote with other bytes (``git status`` in the clone).

    MULTIVEC_DATA_MIRROR=../shared/data python benchmarks/main_job_time.py [--target results/table2.csv]
        [--workdir /tmp/main_job] [--out results/benchmarks/main_job.csv] [-- EXTRA SNAKEMAKE ARGUMENTS]

Writes the CSV (rules first, then a row ``(whole run)``) and a PNG beside it. Run it with the machine
otherwise idle: on 2 cores the run is about 37 minutes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import cpu_name, load_average, run_watching_cpu  # noqa: E402

from multivec.io import write_csv  # noqa: E402
from multivec.pipeline.rule_benchmarks import read_benchmark, summarise  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
WHOLE_RUN = "(whole run)"
RULE_COLUMNS = ["rule", "jobs", "total_s", "mean_s", "max_s", "slowest_job", "peak_rss_mb", "cpu_time_s"]
COLUMNS = [*RULE_COLUMNS, "wall_s",
           "scheduler_cpu_s", "scheduler_share_of_one_core", "target", "snakemake_arguments", "commit", "cpu",
           "load_1min_start", "load_1min_end", "results_rewritten_with_other_bytes", "measured_at"]


def check_request(repo: Path, workdir: Path, mirror: str | None) -> None:
    """Stop with a message before anything runs: no git checkout, no install, a used workdir, no mirror."""
    if not (repo / ".git").exists():
        raise SystemExit(f"{repo} is not a git checkout: the benchmark clones its HEAD")
    if not (repo / ".venv" / "bin" / "snakemake").exists():
        raise SystemExit(f"{repo / '.venv'} has no snakemake: run `bash scripts/install.sh` first")
    if workdir.exists() and any(workdir.iterdir()):
        raise SystemExit(f"--workdir {workdir} is not empty: a fresh clone needs an empty or new folder")
    if not mirror:
        raise SystemExit("MULTIVEC_DATA_MIRROR is not set: the main job reads the data mirror (README, Quick start)")
    if not Path(mirror).is_dir():
        raise SystemExit(f"MULTIVEC_DATA_MIRROR={mirror} is not a folder")


def fresh_clone(repo: Path, workdir: Path) -> str:
    """``git clone`` of HEAD into workdir with the install's .venv linked in; returns the commit."""
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(repo), str(workdir)], check=True)
    (workdir / ".venv").symlink_to((repo / ".venv").resolve())
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=workdir, check=True, capture_output=True,
                          text=True).stdout.strip()


def run_snakemake(workdir: Path, target: str, extra: list[str], mirror: str) -> tuple[float, float, Path]:
    """The README's main command in workdir: (wall seconds, the Snakemake process's own CPU seconds, log)."""
    command = [str(workdir / ".venv" / "bin" / "snakemake"), "--cores", "all", target, *extra]
    # The clone's own package first: the linked install may be an editable one of another checkout.
    python_path = os.pathsep.join(p for p in (str(workdir / "src"), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "MULTIVEC_DATA_MIRROR": str(Path(mirror).resolve()), "PYTHONPATH": python_path}
    log = workdir / "main_job_time.log"
    wall, cpu, code = run_watching_cpu(command, log, poll_seconds=0.5, cwd=workdir, env=env)
    if code != 0:
        raise SystemExit(f"the main job failed ({code}); its log, {log}, ends:\n{log.read_text()[-3000:]}")
    return wall, cpu, log


def rule_rows(folder: Path, since: float) -> list[dict]:
    """One row per rule (``multivec.pipeline.rule_benchmarks.summarise``, the report's per-rule table) from the
    benchmark files under folder written at or after ``since`` (epoch seconds), largest total first. A file in
    Snakemake's plain format (no rule name) is refused: the workflow profile asks for the extended one, so such a
    file is not this run's."""
    jobs = []
    for file in sorted(folder.rglob("*.tsv")):
        written = file.stat().st_mtime
        if written < since:
            continue
        record = read_benchmark(file)
        rule, wildcards = record.pop("rule_name"), record.pop("wildcards")
        if rule is None:
            raise SystemExit(f"{file}: a benchmark file without its rule's name (not the extended format)")
        job = ", ".join(f"{k}={v}" for k, v in wildcards.items()) or rule
        jobs.append({"work": "", "rule": rule, "rule_file": "", "job": job, "written": written, **record})
    return [{column: row[column] for column in RULE_COLUMNS} for row in summarise(jobs)]


def whole_run(rows: list[dict]) -> dict:
    """The per-rule rows summed: the run's jobs, job-seconds, slowest job, peak RSS and CPU seconds."""
    return {"rule": WHOLE_RUN, "jobs": sum(r["jobs"] for r in rows), "total_s": round(sum(r["total_s"] for r in rows), 2),
            "max_s": max(r["max_s"] for r in rows),
            "peak_rss_mb": max((r["peak_rss_mb"] for r in rows if r["peak_rss_mb"] != ""), default=""),
            "cpu_time_s": round(sum(r["cpu_time_s"] for r in rows if r["cpu_time_s"] != ""), 2)}


def rewritten_results(workdir: Path) -> list[str]:
    """Committed files under results/ whose bytes the run changed (``git status --porcelain``)."""
    status = subprocess.run(["git", "status", "--porcelain", "--", "results"], cwd=workdir, check=True,
                            capture_output=True, text=True).stdout
    return sorted(line[3:] for line in status.splitlines() if line[:2].strip() == "M")


def plot(rows: list[dict], whole: dict, path: Path, top: int = 10) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = rows[:top][::-1]
    fig, ax = plt.subplots(figsize=(7.5, 0.28 * len(shown) + 1.2))
    ax.barh([r["rule"] for r in shown], [r["total_s"] for r in shown], color="#4c72b0")
    for y, r in enumerate(shown):
        ax.text(r["total_s"], y, f" {r['total_s']:.0f} s, {r['jobs']} job{'s' * (r['jobs'] != 1)}", va="center",
                fontsize=7)
    ax.set_xlim(0, max(r["total_s"] for r in shown) * 1.3)
    ax.set_xlabel("seconds summed over the rule's jobs")
    ax.tick_params(labelsize=7)
    ax.set_title(f"{whole['target']} from a fresh clone: {whole['wall_s'] / 60:.1f} min wall, {whole['jobs']} jobs, "
                 f"{whole['total_s']:.0f} job-s; scheduler {whole['scheduler_cpu_s']:.0f} CPU-s\n"
                 f"{whole['cpu']}", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="results/table2.csv")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/multivec_main_job"))
    parser.add_argument("--out", type=Path, default=REPO / "results" / "benchmarks" / "main_job.csv")
    parser.add_argument("extra", nargs="*", help="more snakemake arguments, after --")
    args = parser.parse_args(argv)
    mirror = os.environ.get("MULTIVEC_DATA_MIRROR")
    check_request(REPO, args.workdir, mirror)
    commit = fresh_clone(REPO, args.workdir)
    load_start, started = load_average(), time.time()
    print(f"running {args.target} in {args.workdir} (commit {commit[:10]}); log: main_job_time.log", flush=True)
    wall, scheduler_cpu, _ = run_snakemake(args.workdir, args.target, args.extra, mirror)
    rows = rule_rows(args.workdir / "benchmarks", since=started - 1)
    if not rows:
        raise SystemExit(f"the run wrote no benchmark file under {args.workdir / 'benchmarks'}: nothing to break down")
    rewritten = rewritten_results(args.workdir)
    whole = {**whole_run(rows), "wall_s": round(wall, 1), "scheduler_cpu_s": round(scheduler_cpu, 1),
             "scheduler_share_of_one_core": round(scheduler_cpu / wall, 4), "target": args.target,
             "snakemake_arguments": " ".join(args.extra), "commit": commit, "cpu": cpu_name(),
             "load_1min_start": load_start, "load_1min_end": load_average(),
             "results_rewritten_with_other_bytes": "; ".join(rewritten) or "none",
             "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_csv(args.out, [{column: row.get(column, "") for column in COLUMNS} for row in [*rows, whole]])
    plot(rows, whole, args.out.with_suffix(".png"))
    print(f"{args.target}: {wall / 60:.1f} min wall, {whole['jobs']} jobs, {whole['total_s']:.0f} job-seconds; "
          f"scheduler {scheduler_cpu:.0f} CPU-s ({100 * scheduler_cpu / wall:.1f}% of a core); "
          f"results rewritten with other bytes: {whole['results_rewritten_with_other_bytes']}")
    for row in rows[:12]:
        print(f"  {row['rule']:<36} {row['jobs']:>3} jobs {row['total_s']:>8.1f} s  slowest {row['max_s']:.1f} s "
              f"({row['slowest_job']})")
    print(f"wrote {args.out} and {args.out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
