"""benchmarks/scheduler_polling.py on a tiny workflow: it runs, it reads the scheduler's own CPU time, and it
refuses settings that could not run. Never timing."""

import os

import pytest
from benchmark_scripts import load_benchmark


def _load_benchmark():
    return load_benchmark("scheduler_polling")


@pytest.mark.parametrize("arguments", [
    dict(jobs=0, inputs_per_job=1, job_cpu_seconds=0.1, cores=1, repeats=1),
    dict(jobs=2, inputs_per_job=-1, job_cpu_seconds=0.1, cores=1, repeats=1),
    dict(jobs=2, inputs_per_job=1, job_cpu_seconds=0.0, cores=1, repeats=1),
    dict(jobs=2, inputs_per_job=1, job_cpu_seconds=0.1, cores=0, repeats=1),
    dict(jobs=2, inputs_per_job=1, job_cpu_seconds=0.1, cores=1, repeats=0),
])
def test_bad_arguments_stop_with_a_message(arguments):
    bench = _load_benchmark()
    with pytest.raises(SystemExit, match="must be"):
        bench.check_arguments(**arguments)


def test_own_cpu_seconds_reads_this_process_and_none_for_a_gone_one():
    common = load_benchmark("bench_common")  # shared with main_job_time.py
    sum(i * i for i in range(200_000))  # some CPU time of our own
    assert common.own_cpu_seconds(os.getpid()) > 0
    assert common.own_cpu_seconds(2 ** 22 + 12345) is None


def test_a_tiny_workflow_runs_every_job_and_reports_the_scheduler(tmp_path):
    bench = _load_benchmark()
    bench.write_workflow(tmp_path, jobs=3, inputs_per_job=2, job_cpu_seconds=0.05)
    assert len(list((tmp_path / "in").iterdir())) == 6
    wall, cpu = bench.run_once(tmp_path, cores=1, extra=[])
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["0.done", "1.done", "2.done"]
    assert 0 < cpu < wall


def test_a_failing_workflow_stops_with_snakemakes_message(tmp_path):
    bench = _load_benchmark()
    bench.write_workflow(tmp_path, jobs=1, inputs_per_job=1, job_cpu_seconds=0.05)
    (tmp_path / "in" / "0_0.txt").unlink()
    with pytest.raises(SystemExit, match="failed"):
        bench.run_once(tmp_path, cores=1, extra=[])
