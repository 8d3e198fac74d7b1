"""The check before any job that every data file the configuration reads can be obtained here.

``check_sources(config, mode)`` asks ``multivec.data.availability`` which files the configured scale reads
that no data mirror holds, that have no upstream URL and that nothing here can build (for the Debian Reference
pairs: no ``apt-get`` and no placed package files), and raises ``MissingSourceError`` with one message naming
each and the two ways to get it. ``check_config`` runs it last, on a valid config.

``mode``: ``"stop"`` raises; ``"auto"`` (what the Snakefile's ``check_config(config, schema)`` runs) raises in a
run of Snakemake's command line that can start jobs and, in one that cannot (``-n``/``--dry-run``, ``--list-rules``, ``--dag``
and the like: the DAG is planned, nothing is fetched), prints the same message as a warning and goes on, so a
machine without the data can still plan and inspect the DAG (so does a program loading the workflow through
Snakemake's Python API); a job of a run (Snakemake's ``--mode remote`` or
``subprocess``: a cluster job loads the Snakefile again) checks nothing, its run checked before any job; outside
a Snakemake run (a library call, the tests) ``"auto"`` checks nothing, because what a machine holds is no
property of a configuration.

The one import of the data layer from the config layer: which files a config reads and how each is obtained
is the data layer's knowledge (``multivec.data.availability``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from multivec.config.dataclass_config import ConfigError

# Snakemake options under which no job starts (the DAG is planned or shown only).
NO_JOB_OPTIONS = frozenset({"-n", "--dry-run", "--dryrun", "--list-rules", "--list", "-l", "--list-target-rules",
                            "--lt", "--lint", "--dag", "--rulegraph", "--filegraph", "--d3dag", "--summary", "-S",
                            "--detailed-summary", "-D", "--list-changes", "--lc", "--list-untracked", "--lu",
                            "--unlock", "--cleanup-metadata", "--cm", "--report", "--containerize",
                            "--print-compilation", "--generate-unit-tests", "--archive", "--delete-all-output",
                            "--delete-temp-output"})
_SHORT_FLAGS_WITH_N = re.compile(r"-[A-Za-z]*n[A-Za-z]*")  # -n among combined short flags (-pn, -nq)


class MissingSourceError(ConfigError):
    """A data file the configured scale reads cannot be obtained on this machine; the message says which and how."""


def in_snakemake_run() -> bool:
    """True while a Snakemake workflow is being loaded in this process (its ``workflow`` global exists)."""
    module = sys.modules.get("snakemake.workflow")
    return getattr(module, "workflow", None) is not None


def starts_no_job(argv: list[str] | None = None) -> bool:
    """The Snakemake command line plans or shows the DAG only (``NO_JOB_OPTIONS``)."""
    args = sys.argv[1:] if argv is None else argv
    return any(arg in NO_JOB_OPTIONS or arg.split("=", 1)[0] in NO_JOB_OPTIONS
               or _SHORT_FLAGS_WITH_N.fullmatch(arg) for arg in args)


def invoked_as_snakemake_cli(argv0: str | None = None) -> bool:
    """This process is Snakemake's command line (``snakemake ...`` or ``python -m snakemake ...``), whose
    arguments say whether jobs start; a program loading the workflow through Snakemake's Python API (e.g.
    ``multivec.pipeline.report_flags``) starts none through this check's knowledge, so it is only warned."""
    parts = Path(sys.argv[0] if argv0 is None else argv0).parts
    return bool(parts) and (parts[-1] == "snakemake" or parts[-2:] == ("snakemake", "__main__.py"))


def is_job_of_a_run(argv: list[str] | None = None) -> bool:
    """Snakemake runs one job of a run (``--mode remote``/``subprocess``: a cluster or subprocess job)."""
    args = sys.argv[1:] if argv is None else argv
    for i, arg in enumerate(args):
        value = arg.split("=", 1)[1] if arg.startswith("--mode=") else (
            args[i + 1] if arg == "--mode" and i + 1 < len(args) else None)
        if value is not None and value.lower() in ("remote", "subprocess"):
            return True
    return False


def check_sources(config: dict, mode: str = "stop") -> str | None:
    """Raise ``MissingSourceError`` (``mode`` "stop", or "auto" in a run that starts jobs); return the message
    when it was only warned about (a dry run), else None. ``mode`` "off" checks nothing."""
    if mode not in ("stop", "auto", "off"):
        raise ValueError(f"mode {mode!r}: one of stop, auto, off")
    if mode == "off" or (mode == "auto" and (not in_snakemake_run() or is_job_of_a_run())):
        return None
    from multivec.data.availability import source_problem

    problem = source_problem(config)
    if problem is None:
        return None
    if mode == "auto" and (starts_no_job() or not invoked_as_snakemake_cli()):
        print(f"Warning: {problem}\nThis run starts no job, so it goes on; a run that starts jobs stops here.",
              file=sys.stderr)
        return problem
    raise MissingSourceError(f"{problem}\nStopped before any job.")
