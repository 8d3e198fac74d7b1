"""Snakemake's scheduler polling: what the default job-rate limit costs a run whose ready jobs wait for cores.

Snakemake's ``--max-jobs-per-timespan`` (default ``100/1s``) also sets how often its scheduler wakes up: every
pass of the scheduler (9.x, ``JobScheduler.schedule``) starts a timer of one timespan that wakes it for another
pass, and a job that ends wakes it for one more, which starts its own timer. So the timer chains add up with
the jobs that have ended, and every pass re-checks each ready job's input files (their existence and sizes).
On 2 cores the demo DAG keeps about a hundred jobs ready for most of the run: in a rebuild of the demo results
the scheduler itself took about 45% of one core (py-spy: ``update_input_sizes``, ``exists``). A longer
timespan polls less, but the process waits for its last timer before it exits: up to one timespan more per
run.

This benchmark builds a synthetic workflow of that shape in a temporary folder: ``--jobs`` independent jobs,
each with ``--inputs-per-job`` input files of its own and a fixed amount of CPU work (``--job-cpu-seconds`` of
process time, so a job slowed by the scheduler takes longer in wall time, not less work), run with
``--cores``. It runs the same workflow with each setting, alternated repeat by repeat, and records the wall
time of the whole run and the CPU time of the Snakemake process itself (its own user + system time, read from
/proc while it runs; the jobs are its children and are not counted).

    python benchmarks/scheduler_polling.py [--jobs 120] [--inputs-per-job 20] [--job-cpu-seconds 1.0]
        [--cores 2] [--repeats 2] [--out results/benchmarks/scheduler_polling.csv]   (and a .png)
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import cpu_name, load_average, run_watching_cpu  # noqa: E402

from multivec.io import write_csv  # noqa: E402

SETTINGS = {
    "Snakemake's default (100/1s)": [],
    "100/10s": ["--max-jobs-per-timespan", "100/10s"],
    "1000/60s": ["--max-jobs-per-timespan", "1000/60s"],
}

BURN = """import sys, time
end = time.process_time() + float(sys.argv[1])
while time.process_time() < end:
    pass
open(sys.argv[2], "w").close()
"""

SNAKEFILE = """N_JOBS = {jobs}
N_INPUTS = {inputs}

rule all:
    input:
        expand("out/{{job}}.done", job=range(N_JOBS)),

rule work:
    input:
        lambda wildcards: [f"in/{{wildcards.job}}_{{k}}.txt" for k in range(N_INPUTS)],
    output:
        "out/{{job}}.done",
    shell:
        "{python} burn.py {seconds} {{output}}"
"""


def check_arguments(jobs: int, inputs_per_job: int, job_cpu_seconds: float, cores: int, repeats: int) -> None:
    """Stop with a message on a workflow that could not show the effect (or could not run)."""
    if jobs < 1 or inputs_per_job < 0 or repeats < 1:
        raise SystemExit(f"--jobs ({jobs}) and --repeats ({repeats}) must be >= 1, --inputs-per-job "
                         f"({inputs_per_job}) >= 0")
    if job_cpu_seconds <= 0:
        raise SystemExit(f"--job-cpu-seconds must be > 0, got {job_cpu_seconds}")
    if cores < 1:
        raise SystemExit(f"--cores must be >= 1, got {cores}")
    if shutil.which("snakemake") is None and not (Path(sys.executable).parent / "snakemake").exists():
        raise SystemExit("snakemake is not installed beside this Python: run scripts/install.sh first")


def write_workflow(folder: Path, jobs: int, inputs_per_job: int, job_cpu_seconds: float) -> None:
    (folder / "in").mkdir(parents=True)
    for job in range(jobs):
        for k in range(inputs_per_job):
            (folder / "in" / f"{job}_{k}.txt").write_text("x\n")
    (folder / "burn.py").write_text(BURN)
    (folder / "Snakefile").write_text(SNAKEFILE.format(jobs=jobs, inputs=inputs_per_job, seconds=job_cpu_seconds,
                                                       python=sys.executable))


def run_once(folder: Path, cores: int, extra: list[str]) -> tuple[float, float]:
    """One clean run of the workflow: (wall seconds, the Snakemake process's own CPU seconds)."""
    shutil.rmtree(folder / "out", ignore_errors=True)
    shutil.rmtree(folder / ".snakemake", ignore_errors=True)
    snakemake = Path(sys.executable).parent / "snakemake"
    command = [str(snakemake) if snakemake.exists() else "snakemake", "--cores", str(cores), "--quiet", "all",
               "--directory", str(folder), "--snakefile", str(folder / "Snakefile"), *extra]
    wall, cpu, code = run_watching_cpu(command, folder / "snakemake.log")
    if code != 0:
        raise SystemExit(f"snakemake {' '.join(extra) or '(defaults)'} failed ({code}):\n"
                         f"{(folder / 'snakemake.log').read_text()[-2000:]}")
    return wall, cpu


def compare(jobs: int, inputs_per_job: int, job_cpu_seconds: float, cores: int, repeats: int) -> list[dict]:
    check_arguments(jobs, inputs_per_job, job_cpu_seconds, cores, repeats)
    with tempfile.TemporaryDirectory(prefix="scheduler_polling_") as tmp:
        folder = Path(tmp)
        write_workflow(folder, jobs, inputs_per_job, job_cpu_seconds)
        names = list(SETTINGS)
        walls = {name: [] for name in names}
        cpus = {name: [] for name in names}
        loads = []
        for repeat in range(repeats):
            loads.append(load_average())
            shift = repeat % len(names)
            for name in names[shift:] + names[:shift]:
                wall, cpu = run_once(folder, cores, SETTINGS[name])
                walls[name].append(wall)
                cpus[name].append(cpu)
    default = names[0]
    ideal = jobs * job_cpu_seconds / min(cores, jobs)
    rows = []
    for name in names:
        rows.append({
            "setting": name, "max_jobs_per_timespan": " ".join(SETTINGS[name][1:]) or "100/1s",
            "jobs": jobs, "inputs_per_job": inputs_per_job, "job_cpu_seconds": job_cpu_seconds, "cores": cores,
            "repeats": repeats, "wall_seconds_median": statistics.median(walls[name]),
            "ideal_wall_seconds": ideal,
            "scheduler_cpu_seconds_median": statistics.median(cpus[name]),
            "scheduler_share_of_one_core": statistics.median(c / w for c, w in zip(cpus[name], walls[name])),
            "wall_speedup_over_default": statistics.median(d / w for d, w in zip(walls[default], walls[name])),
            "cpu": cpu_name(), "load_average_min": min(loads), "load_average_max": max(loads),
        })
    return rows


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(8.5, 2.4))
    names = [r["setting"] for r in rows][::-1]
    walls = [r["wall_seconds_median"] for r in rows][::-1]
    cpus = [r["scheduler_cpu_seconds_median"] for r in rows][::-1]
    left.barh(names, walls, color="#4c72b0")
    left.axvline(rows[0]["ideal_wall_seconds"], color="grey", ls=":", lw=1, label="jobs' CPU / cores")
    for y, (w, r) in enumerate(zip(walls, rows[::-1])):
        left.text(w, y, f" {w:.0f} s ({r['wall_speedup_over_default']:.2f}x)", va="center", fontsize=7)
    left.set_xlim(0, max(walls) * 1.45)
    left.set_xlabel("wall time of the run (s)")
    left.legend(fontsize=7, loc="lower right")
    right.barh(names, cpus, color="#dd8452")
    for y, (c, r) in enumerate(zip(cpus, rows[::-1])):
        right.text(c, y, f" {c:.1f} s ({100 * r['scheduler_share_of_one_core']:.0f}% of a core)", va="center",
                   fontsize=7)
    right.set_xlim(0, max(cpus) * 1.6 + 0.1)
    right.set_yticks([])
    right.set_xlabel("Snakemake's own CPU time (s)")
    r = rows[0]
    fig.suptitle(f"{r['jobs']} ready jobs x {r['inputs_per_job']} inputs, {r['job_cpu_seconds']} CPU-s each, "
                 f"--cores {r['cores']} (median of {r['repeats']})", fontsize=8)
    for ax in (left, right):
        ax.tick_params(labelsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=120)
    parser.add_argument("--inputs-per-job", type=int, default=20)
    parser.add_argument("--job-cpu-seconds", type=float, default=1.0)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("results/benchmarks/scheduler_polling.csv"))
    args = parser.parse_args(argv)
    rows = compare(args.jobs, args.inputs_per_job, args.job_cpu_seconds, args.cores, args.repeats)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_csv(args.out, rows)
    plot(rows, args.out.with_suffix(".png"))
    for r in rows:
        print(f"{r['setting']}: {r['wall_seconds_median']:.1f} s wall, scheduler {r['scheduler_cpu_seconds_median']:.1f}"
              f" CPU-s ({100 * r['scheduler_share_of_one_core']:.0f}% of a core)")


if __name__ == "__main__":
    main()
