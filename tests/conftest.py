"""Shared fixtures. Tests never reach a model hub: HF_HUB_OFFLINE=1 is forced here."""

import os
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

REPO = Path(__file__).resolve().parents[1]

# The README's test command gives the mirror relative to where pytest starts
# (MULTIVEC_DATA_MIRROR=../shared/data); tests run Snakemake in other directories, so the
# path is made absolute once, here, against the directory pytest was started from.
if os.environ.get("MULTIVEC_DATA_MIRROR"):
    os.environ["MULTIVEC_DATA_MIRROR"] = str(Path(os.environ["MULTIVEC_DATA_MIRROR"]).expanduser().resolve())


# What a run of the workflow needs from the repository (tests copy it so runs never touch the checkout).
WORKFLOW_PARTS = ["Snakefile", "rules", "workflow", "config", "profiles", "envs", "src", "scripts"]


@pytest.fixture(scope="session")
def copy_workflow():
    """A function that copies the workflow's parts into a new folder ``dest`` and returns ``dest``."""
    import shutil

    def copy(dest: Path) -> Path:
        dest.mkdir(parents=True)
        for part in WORKFLOW_PARTS:
            src = REPO / part
            (shutil.copytree if src.is_dir() else shutil.copy)(src, dest / part)
        return dest

    return copy


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The local data mirror named by $MULTIVEC_DATA_MIRROR (.ci/run sets it)."""
    value = os.environ.get("MULTIVEC_DATA_MIRROR")
    if not value:
        pytest.skip("MULTIVEC_DATA_MIRROR is not set: tests on real mirrored data need it")
    path = Path(value)
    assert path.is_dir(), f"MULTIVEC_DATA_MIRROR={value} is not a directory"
    return path


@pytest.fixture(autouse=True)
def _one_thread():
    """Tests share a 2-core machine: keep torch to one thread."""
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def local_slurm():
    """A running single-node SLURM on this machine (scripts/slurm/start_local_slurm.sh), for the tests that submit
    through ``--profile`` (tests/test_slurm_cluster.py, the rehearsal in tests/test_rehearsal.py). Started once and
    stopped when the session ends, if started here: while SLURM's client is installed but its controller is down,
    every Snakemake start waits 10 s (the SLURM executor plugin asks ``scontrol show config`` when it is imported,
    with a 10 s timeout), which would slow every later test that runs Snakemake."""
    import shutil
    import subprocess
    import tempfile
    from types import SimpleNamespace

    from slurm_accounting import CPU_PARTITION, run, slurm_is_up

    reason = None
    if os.geteuid() != 0:
        reason = "it needs root (apt-get and the SLURM daemons)"
    elif shutil.which("apt-get") is None and not slurm_is_up():
        reason = "apt-get not found (the script installs Debian/Ubuntu packages)"
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the SLURM tests, but {reason}")
        pytest.skip(f"no local SLURM: {reason}")
    from filelock import FileLock

    # Parallel test workers (pytest -n, the README's fast command) each run this fixture: one starts SLURM while
    # the others wait on the lock, and none stops it, since another worker may still be submitting to it.
    parallel_worker = os.environ.get("PYTEST_XDIST_WORKER") is not None
    with FileLock(str(Path(tempfile.gettempdir()) / "multivec-local-slurm.lock"), timeout=1500):
        was_up = slurm_is_up()
        started = subprocess.run(["bash", str(REPO / "scripts/slurm/start_local_slurm.sh")], capture_output=True,
                                 text=True, timeout=1200)
    print(started.stdout, started.stderr)
    assert started.returncode == 0, started.stdout + started.stderr
    yield SimpleNamespace(node=run(["sinfo", "-h", "-p", CPU_PARTITION, "-o", "%N"]).strip())
    if not was_up and not parallel_worker:
        stopped = subprocess.run(["bash", str(REPO / "scripts/slurm/stop_local_slurm.sh")], capture_output=True,
                                 text=True, timeout=300)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr


@pytest.fixture(scope="session", autouse=True)
def _slurm_controller_answers(request):
    """Where SLURM's client is installed (a machine that ran the SLURM tests before) and the tests run as root,
    the local SLURM is up for the whole session: with its controller down, every Snakemake start in every test
    would wait 10 s for ``scontrol`` (see ``local_slurm``). Elsewhere this does nothing."""
    import shutil

    if shutil.which("scontrol") and shutil.which("apt-get") and os.geteuid() == 0:
        request.getfixturevalue("local_slurm")


@pytest.fixture(autouse=True)
def _no_leaked_multivec_environment():
    """A test that leaves a MULTIVEC_* variable changed fails: later tests' Snakemake runs inherit it (a pinned registry
    overlay in a deleted tmp folder broke every later dry run)."""
    before = {k: v for k, v in os.environ.items() if k.startswith("MULTIVEC_")}
    yield
    after = {k: v for k, v in os.environ.items() if k.startswith("MULTIVEC_")}
    if after != before:
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        pytest.fail(f"the test left environment variables changed: {changed} (use monkeypatch.setenv first)")


# The smoke-scale DAG, built once per session and shared by the end-to-end tests that only read it: Table 2 from
# nothing first (the README's main job, at smoke scale), then `all` on top. Each test used to build its own copy,
# and the copies rebuilt the same models: 1,607 s of a 4,528 s suite on a slower 2-core host, now 1,115 s.
# Tests that change what is built (--forcerun, edited configs) keep their own copy.
SMOKE = ("--configfile", "config/smoke.yaml", "--cores", "2")


def _run_snakemake(work: Path, *args: str, timeout: int):
    import subprocess
    import sys

    return subprocess.run([str(Path(sys.executable).parent / "snakemake"), *args], cwd=work,
                          env=dict(os.environ, HF_HUB_OFFLINE="1"), capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def smoke_table2(tmp_path_factory, mirror, copy_workflow):
    """A workflow copy in which ``results/table2.csv`` was built at smoke scale from nothing: ``(work, result)``."""
    work = copy_workflow(tmp_path_factory.mktemp("smoke") / "wf")
    result = _run_snakemake(work, *SMOKE, "results/table2.csv", timeout=1500)
    return work, result


@pytest.fixture(scope="session")
def smoke_all(smoke_table2):
    """The same copy with ``all`` built on top (every target of the smoke DAG). Read it, never change it."""
    work, table2 = smoke_table2
    assert table2.returncode == 0, table2.stdout[-5000:] + table2.stderr[-5000:]
    result = _run_snakemake(work, *SMOKE, "all", timeout=5400)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-5000:]
    return work


@pytest.fixture(scope="session")
def copy_of_smoke_all(smoke_all):
    """A function that copies the built smoke DAG (``smoke_all``) into a new folder ``dest`` and returns ``dest``:
    for tests that rerun or extend part of it (--forcerun, more targets) without rebuilding the rest. File times
    and Snakemake's records are copied too, so nothing in the copy is out of date."""
    import shutil

    def copy(dest: Path) -> Path:
        shutil.copytree(smoke_all, dest, symlinks=True)
        shutil.rmtree(dest / ".snakemake" / "locks", ignore_errors=True)
        return dest

    return copy


# Fixtures that build the smoke DAG or start a real SLURM: a test using one must carry the e2e mark, so that
# `-m "not e2e"` runs the unit tests alone, in minutes.
END_TO_END_FIXTURES = {"smoke_table2", "smoke_all", "copy_of_smoke_all", "local_slurm"}


def unmarked_end_to_end_tests(items) -> list[str]:
    return [item.nodeid for item in items
            if set(getattr(item, "fixturenames", ())) & END_TO_END_FIXTURES and item.get_closest_marker("e2e") is None]


def pytest_collection_modifyitems(config, items):
    unmarked = unmarked_end_to_end_tests(items)
    if unmarked:
        raise pytest.UsageError(f"tests that build the smoke DAG or start SLURM without the e2e mark: {unmarked}")
