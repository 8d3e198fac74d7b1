"""Extraction of one member from a downloaded zip or tar archive (WikiText-103, ParaBank)."""

from __future__ import annotations

import os
import shutil
import tarfile
import zipfile
from pathlib import Path


def extract_member(archive: str | os.PathLike, member: str, dest: str | os.PathLike) -> None:
    """Copy ``member`` (a path inside the archive) to ``dest``; errors list what the archive holds."""
    archive, dest = Path(archive), Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".part")
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            names = zf.namelist()
            if member not in names:
                raise FileNotFoundError(f"{archive}: no member {member!r}; it holds e.g. {names[:10]}")
            with zf.open(member) as src, open(tmp, "wb") as out:
                shutil.copyfileobj(src, out)
    elif tarfile.is_tarfile(archive):
        with tarfile.open(archive) as tf:
            try:
                src = tf.extractfile(member)
            except KeyError:
                raise FileNotFoundError(f"{archive}: no member {member!r}; it holds e.g. {tf.getnames()[:10]}") from None
            with src, open(tmp, "wb") as out:
                shutil.copyfileobj(src, out)
    else:
        raise ValueError(f"{archive} is neither a zip nor a tar archive")
    os.replace(tmp, dest)
