"""Support for the thin scripts in ``workflow/scripts``: logging into the rule's ``log:``
file and thread limits. Nothing here knows about any paper."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from pathlib import Path
from typing import Iterator


class _Tee:
    """Write to the console and the rule's log file, so progress bars show in both."""

    def __init__(self, *streams):
        self.streams = streams

    def write(self, text):
        for stream in self.streams:
            stream.write(text)
            stream.flush()
        return len(text)

    def flush(self):
        for stream in self.streams:
            stream.flush()

    def isatty(self):
        return False


@contextlib.contextmanager
def rule_logging(log_path: str | os.PathLike, threads: int | None = None) -> Iterator[logging.Logger]:
    """Send logging and stderr (tqdm) to ``log_path`` too; cap torch/BLAS threads to ``threads``.

    Exceptions are logged with their traceback and re-raised, so Snakemake marks the job failed.
    """
    if threads:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ[var] = str(threads)
        with contextlib.suppress(ImportError):  # rules without torch do not need it
            import torch

            torch.set_num_threads(threads)
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    handle = open(log_path, "w", encoding="utf-8")
    saved_stderr = sys.stderr
    sys.stderr = _Tee(saved_stderr, handle)
    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    log = logging.getLogger("multivec.rule")
    start = time.time()
    try:
        yield log
        log.info("done in %.1f s", time.time() - start)
    except BaseException:
        log.exception("failed after %.1f s", time.time() - start)
        raise
    finally:
        root.removeHandler(handler)
        sys.stderr = saved_stderr
        handle.close()


def caller_directory(workdir_override: str | os.PathLike | None) -> Path:
    """The directory the user started Snakemake from, for resolving relative paths they gave.

    ``snakemake --directory DIR`` changes into DIR before the Snakefile runs, so the
    current directory is then DIR. The shell's ``$PWD`` still names where the command was
    typed; it is used when it is consistent with the change (a relative DIR must lead
    from ``$PWD`` to the current directory). Without ``--directory`` (``workdir_override``
    None) the current directory is the caller's.
    """
    cwd = Path.cwd()
    if workdir_override is None:
        return cwd
    shell_pwd = os.environ.get("PWD")
    if shell_pwd and Path(shell_pwd).is_dir():
        candidate = Path(shell_pwd)
        override = Path(workdir_override)
        if override.is_absolute() or (candidate / override).resolve() == cwd.resolve():
            return candidate
    return cwd
