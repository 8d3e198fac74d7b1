"""Can this machine obtain every source file a configuration reads? Said before any job, in one message.

``unobtainable(config, mirror)`` lists the files of ``needs.needed_files(config)`` that no job could get:
a file is obtainable when the run already has it (``data/raw/<source>/<file>`` in the working directory: a
rerun, or a cluster job of a run whose download jobs ran), when the data mirror holds it (``<mirror>/<mirror_path>``), when it has an upstream URL
(the network cannot be tested before a run: a download that fails, fails in its job), or when a builder
(``multivec.data.builders``) can start here (its prerequisites: for the Debian Reference pairs, ``apt-get`` on
``PATH`` or the two placed ``.deb`` files). What is left is a mirror-only file that the mirror lacks and that
nothing here can build: ``missing_message`` says, in one message, which files, and the two ways to get each
(a data mirror holding it; the builder's prerequisite, where there is a builder).

``configured_mirror(config)`` finds the mirror as a run does (``$MULTIVEC_DATA_MIRROR``, else the config key
``data_mirror``), before ``rules/common.smk`` pins it; a relative path is tried against the current directory
and ``$PWD`` (Snakemake's ``--directory`` changes the first). A mirror that is set but is no directory is left
to ``multivec.io.resources.pin_data_mirror``, which stops the run naming it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from multivec.data.builders import builder_for
from multivec.data.needs import needed_files
from multivec.data.sources import get_file, get_source
from multivec.io.resources import ENV_MIRROR

UNRESOLVED = "unresolved"  # configured_mirror: a mirror is set but names no directory here


@dataclass(frozen=True)
class MissingFile:
    source: str
    file: str
    mirror_path: str
    reason: str  # why it cannot be obtained here
    ways: tuple[str, ...]  # how to get it


def configured_mirror(config: dict) -> Path | None | str:
    """The data mirror a run would use: a directory, None (no mirror set) or ``UNRESOLVED``."""
    value = os.environ.get(ENV_MIRROR) or config.get("data_mirror") or None
    if not value:
        return None
    path = Path(value).expanduser()
    candidates = [path] if path.is_absolute() else [Path.cwd() / path] + (
        [Path(os.environ["PWD"]) / path] if os.environ.get("PWD") else [])
    for candidate in candidates:
        if candidate.is_dir():
            return candidate.resolve()
    return UNRESOLVED


def _mirror_way(mirror_path: str, scale: str | None) -> str:
    return (f"a data mirror holding {mirror_path}: set ${ENV_MIRROR} or the config key data_mirror to it "
            f"(`python -m multivec mirror DIR --scale {scale or 'SCALE'}` writes one on a machine that can get it)")


def unobtainable(config: dict, mirror: str | os.PathLike | None,
                 workdir: str | os.PathLike | None = None) -> list[MissingFile]:
    """The files ``config`` reads that neither the run (``workdir``, default the current directory), the mirror,
    an upstream URL nor a builder can provide here."""
    workdir = Path.cwd() if workdir is None else Path(workdir)
    missing = []
    scale = config.get("scale")
    where = f"the data mirror {mirror}" if mirror is not None else "no data mirror is set"
    for source_name, files in needed_files(config).items():
        for name in files:
            remote = get_file(source_name, name)
            if (workdir / "data" / "raw" / source_name / name).is_file():
                continue
            if mirror is not None and (Path(mirror) / remote.mirror_path).is_file():
                continue
            if remote.url is not None:
                continue
            lacks = f"{where} has no {remote.mirror_path}" if mirror is not None else where
            builder = builder_for(source_name, name)
            if builder is None:
                note = get_source(source_name).note
                missing.append(MissingFile(source_name, name, remote.mirror_path,
                                           f"mirror-only (no public URL); {lacks}; nothing here can build it"
                                           + (f" ({note.rstrip('.')})" if note else ""),
                                           (_mirror_way(remote.mirror_path, scale),)))
                continue
            ready, why = builder.prerequisites(mirror)
            if not ready:
                missing.append(MissingFile(source_name, name, remote.mirror_path,
                                           f"mirror-only (no public URL); {lacks}; it can be {builder.what}, but "
                                           f"not here: {why}",
                                           (_mirror_way(remote.mirror_path, scale),
                                            f"what its build needs: {builder.how_to_get()}")))
    return missing


def missing_message(missing: list[MissingFile], scale: str | None = None) -> str:
    """One message for every file that cannot be obtained, with the ways to get each."""
    lines = [f"cannot obtain {len(missing)} data file{'s' if len(missing) > 1 else ''} that the configured scale"
             + (f" ({scale})" if scale else "") + " reads:"]
    for item in missing:
        lines.append(f"  {item.source}/{item.file}: {item.reason}.")
        lines.append("    Get it either way:" if len(item.ways) > 1 else "    Get it this way:")
        lines.extend(f"      - {way}" for way in item.ways)
    return "\n".join(lines)


def source_problem(config: dict) -> str | None:
    """``missing_message`` of what ``config`` reads and cannot be obtained here, or None."""
    mirror = configured_mirror(config)
    if mirror == UNRESOLVED:
        return None
    missing = unobtainable(config, mirror)
    return missing_message(missing, config.get("scale")) if missing else None
