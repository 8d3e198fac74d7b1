"""Shared helpers of the speed benchmarks: the machine's conditions, interleaved timing, ratio summaries.

The reference machine is shared (2 cores, other jobs running), so every benchmark times ours and its anchor
side by side in one run, alternating them repeat by repeat, and reports the median of the per-repeat ratios;
each row records the CPU model and the load average so a reader knows the conditions.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from pathlib import Path
from typing import Callable


def cpu_name() -> str:
    """The CPU model from /proc/cpuinfo and the number of cores this process may use."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip() + f" ({cores} cores)"
    except OSError:
        pass
    return f"unknown ({cores} cores)"


def load_average() -> float:
    """The 1-minute load average (how busy the shared machine was)."""
    return float(os.getloadavg()[0])


def interleaved(runs: dict[str, Callable[[], object]], repeats: int,
                warmup: bool = False) -> tuple[dict[str, list[float]], list[float]]:
    """Time each run ``repeats`` times, alternating them (ABAB..., the order rotated each repeat so neither
    side always goes first), after one untimed call of each when ``warmup`` (first-touch memory, kernel and
    thread-pool start-up). Returns {name: [seconds per repeat]} and the load average at each repeat's start."""
    names = list(runs)
    if warmup:
        for name in names:
            runs[name]()
    seconds: dict[str, list[float]] = {name: [] for name in names}
    loads = []
    for repeat in range(repeats):
        loads.append(load_average())
        shift = repeat % len(names)
        for name in names[shift:] + names[:shift]:
            start = time.perf_counter()
            runs[name]()
            seconds[name].append(time.perf_counter() - start)
    return seconds, loads


def median_ratio(anchor: list[float], ours: list[float]) -> float:
    """Median over repeats of anchor seconds / our seconds (> 1: ours is faster)."""
    return float(statistics.median(a / o for a, o in zip(anchor, ours)))


def peak_rss_mb() -> float:
    """This process's peak resident set size so far (MB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def own_cpu_seconds(pid: int) -> float | None:
    """utime + stime of one process (not its children), from /proc/<pid>/stat; None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_watching_cpu(command: list[str], log: Path, poll_seconds: float = 0.2, **popen) -> tuple[float, float, int]:
    """Run ``command`` with its output to the file ``log`` (a file, not a pipe: a long log must not fill a pipe
    and stall the run), reading its own CPU time (``own_cpu_seconds``, children excluded) while it runs.
    Returns (wall seconds, the process's own CPU seconds when last seen, exit code)."""
    start = time.perf_counter()
    with log.open("w") as handle:
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, **popen)
        cpu = 0.0
        while process.poll() is None:
            seen = own_cpu_seconds(process.pid)
            cpu = seen if seen is not None else cpu
            time.sleep(poll_seconds)
    return time.perf_counter() - start, cpu, process.returncode
