"""Committed copies of the small files a results table reads (shared by all three works).

Besides its per-unit scores (``results/units/``), a results table reads a few small JSON files that training
and encoding write under ``models/`` and ``data/``: training summaries, model configs, the ``meta.json`` of
an embeddings folder, the sentence-final share. Those folders are not committed (weights and vectors are large),
so without these copies a clone could not re-render a table after a change of the statistics method without
retraining every model. The rule ``committed_input`` (``rules/committed_inputs.smk``) copies each such file byte
for byte to ``results/inputs/<its path>``, which is committed, and every table rule reads the copies: a clone
re-renders every table and verdict from ``results/`` alone (``docs/statistics.md``, "Re-deriving tables and
verdicts without retraining").

A file that lives inside a ``directory()`` output (an embeddings folder's ``meta.json``, ``FOLDER_FILES``) cannot
be named as an input on its own (Snakemake matches the folder, not the files in it), so its copy depends on the
folder (``source_of``).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path, PurePosixPath

from multivec.io.checked_files import read_json

INPUTS_ROOT = "results/inputs"
# What may be copied: a JSON file under models/ or data/ (the copy keeps the path below results/inputs/).
SOURCE_PATTERN = r"(models|data)/.+\.json"
# Files written inside a directory() output: their copy depends on the folder.
FOLDER_FILES = ("meta.json",)


def committed_input(path: str | os.PathLike) -> str:
    """The committed copy of ``path`` (a JSON file under ``models/`` or ``data/``): ``results/inputs/<path>``."""
    path = PurePosixPath(path).as_posix()
    if not re.fullmatch(SOURCE_PATTERN, path):
        raise ValueError(f"{path}: only a JSON file under models/ or data/ has a committed copy "
                         f"(pattern {SOURCE_PATTERN})")
    return f"{INPUTS_ROOT}/{path}"


def committed_folder(folder: str | os.PathLike) -> str:
    """The folder of the committed copies of the files in ``folder`` (under ``models/`` or ``data/``)."""
    folder = PurePosixPath(folder).as_posix().rstrip("/")
    if not re.fullmatch(r"(models|data)/.+", folder):
        raise ValueError(f"{folder}: only a folder under models/ or data/ has committed copies")
    return f"{INPUTS_ROOT}/{folder}"


def source_of(path: str | os.PathLike) -> str:
    """What the copy of ``path`` (a source path, as ``committed_input`` takes it) depends on: the file, or, for a
    file that lives inside a ``directory()`` output (``FOLDER_FILES``), its folder."""
    source = PurePosixPath(path)
    return source.parent.as_posix() if source.name in FOLDER_FILES else source.as_posix()


def copy_input(source: str | os.PathLike, destination: str | os.PathLike) -> Path:
    """Copy ``source`` byte for byte to ``destination``, after checking that it parses as JSON (a malformed file
    is refused, naming it, rather than committed)."""
    read_json(source)
    destination = Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, destination)
    return destination
