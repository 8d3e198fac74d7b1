"""Registered files that can be built here when no data mirror holds them (``fetch`` builds them then).

A mirror-only file (``RemoteFile.url`` None) normally comes from a data mirror alone; a ``Builder`` makes it from
public inputs instead. ``BUILDERS`` maps ``(source, file)`` to its builder:

- ``debian_reference/pairs.jsonl``: from the Debian packages ``debian-reference-en`` and ``debian-reference-zh-cn``
  (``multivec.data.debian_reference``: placed ``.deb`` files or ``apt-get download``).

A builder says whether it can start here (``prerequisites(mirror)``: what it would use, or what is missing; the
network is not tested) and how to make it possible (``how_to_get()``), for the check before any job
(``multivec.data.availability``) and the ``mirror`` command.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from multivec.data import debian_reference


@dataclass(frozen=True)
class Builder:
    what: str  # one line: what the file is built from
    build: Callable[..., object]  # (dest, mirror, registered_sha256, label) -> a report with .summary()
    prerequisites: Callable[[str | os.PathLike | None], tuple[bool, str]]
    how_to_get: Callable[[], str]


def _build_debian_reference(dest: str | os.PathLike, mirror: str | os.PathLike | None, registered_sha256: str | None,
                            label: str):
    return debian_reference.build_pairs(Path(dest), mirror, registered_sha256, label)


BUILDERS: dict[tuple[str, str], Builder] = {
    ("debian_reference", "pairs.jsonl"): Builder(
        what=f"built from the Debian packages {' and '.join(debian_reference.PACKAGES.values())}",
        build=_build_debian_reference,
        prerequisites=debian_reference.prerequisites,
        how_to_get=debian_reference.how_to_get,
    ),
}


def builder_for(source_name: str, relative_file: str) -> Builder | None:
    return BUILDERS.get((source_name, relative_file))
