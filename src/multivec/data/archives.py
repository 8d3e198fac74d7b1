"""Extraction of one member from a downloaded zip or tar archive (WikiText-103, ParaBank).

A missing member lists what the archive holds; a truncated or corrupt archive (a bad CRC, a
stream that ends early, a file that is neither zip nor tar) raises ``MalformedInputError``
naming the archive and the member, and leaves no partial output behind.
"""

from __future__ import annotations

import gzip
import lzma
import os
import shutil
import tarfile
import zipfile
import zlib
from pathlib import Path

from multivec.io import MalformedInputError


def extract_member(archive: str | os.PathLike, member: str, dest: str | os.PathLike) -> None:
    """Copy ``member`` (a path inside the archive) to ``dest``; errors list what the archive holds."""
    archive, dest = Path(archive), Path(dest)
    if not archive.is_file():
        raise FileNotFoundError(f"{archive}: no such file")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".part")
    try:
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
                    raise FileNotFoundError(f"{archive}: no member {member!r}; it holds e.g. "
                                            f"{tf.getnames()[:10]}") from None
                if src is None:
                    raise MalformedInputError(archive, None, f"member {member!r} is not a regular file")
                with src, open(tmp, "wb") as out:
                    shutil.copyfileobj(src, out)
        else:
            raise MalformedInputError(archive, None, "neither a zip nor a tar archive (truncated, or another format)")
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, lzma.LZMAError) as err:
        tmp.unlink(missing_ok=True)
        raise MalformedInputError(archive, None, f"truncated or corrupt archive while reading member "
                                                 f"{member!r}: {err}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, dest)
