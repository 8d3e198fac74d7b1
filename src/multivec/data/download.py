"""Fetching a registered source file: copy it from a local data mirror, or download it.

``fetch(source, file, dest, mirror)`` copies ``<mirror>/<mirror_path>`` when a mirror is
given, else downloads the upstream URL (urllib, with a progress bar; ``file://`` URLs
work too). Either way the file is written atomically (a temporary file in the
destination folder, renamed into place); an empty file is refused, and its sha256 is
checked when the registry knows it (else its size, when known); a mismatch removes the
temporary file and names the file, the expected and the actual digest (and sizes). Files whose digest is unknown are accepted with a warning that logs
the digest, so it can be added to ``multivec.data.sources``.

A mirror-only file that ``multivec.data.builders`` can build (the Debian Reference pairs, from the Debian
packages) is built instead when no mirror is given or the mirror lacks it, so the download rule needs no mirror
for it; a build whose digest differs from the registered one (other package versions) is kept, with a warning.

``file_identity(source, file)`` is what a downloaded file *is* (its registered sha256,
else its upstream URL, else its mirror path): the download rule's parameter, so Snakemake
re-fetches a file when the registry changes it, never because the mirror moved.

``gensim_test_file(name)`` finds real text shipped inside gensim's wheel.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import urllib.request
from pathlib import Path
from typing import BinaryIO

from tqdm import tqdm

from multivec.data.builders import builder_for
from multivec.data.sources import RemoteFile, get_file, get_source

log = logging.getLogger(__name__)

CHUNK = 1 << 20


class DownloadError(RuntimeError):
    """A file could not be fetched or did not verify; the message says which and why."""


def sha256_of(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _copy_stream(src: BinaryIO, dst: BinaryIO, total: int | None, label: str) -> None:
    with tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=label, leave=False) as bar:
        for block in iter(lambda: src.read(CHUNK), b""):
            dst.write(block)
            bar.update(len(block))


def fetch_file(remote: RemoteFile, dest: str | os.PathLike, mirror: str | os.PathLike | None = None,
               label: str = "") -> Path:
    """Fetch one ``RemoteFile`` to ``dest`` (see the module docstring); returns ``dest``."""
    dest = Path(dest)
    label = label or dest.name
    if mirror is not None:
        origin = Path(mirror) / remote.mirror_path
        if not origin.is_file():
            raise DownloadError(f"{label}: the data mirror has no file {origin} (mirror path "
                                f"{remote.mirror_path!r} under mirror {mirror})")
    elif remote.url is None:
        raise DownloadError(f"{label}: this file is mirror-only (no upstream URL); set the config key "
                            f"data_mirror or $MULTIVEC_DATA_MIRROR to a mirror holding {remote.mirror_path!r}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(handle, "wb") as out:
            if mirror is not None:
                with open(origin, "rb") as src:
                    _copy_stream(src, out, origin.stat().st_size, label)
            else:
                try:
                    response = urllib.request.urlopen(remote.url, timeout=60)
                except (OSError, ValueError) as err:
                    raise DownloadError(f"{label}: cannot download {remote.url}: {err}") from None
                with response:
                    length = response.headers.get("Content-Length") if hasattr(response, "headers") else None
                    total = int(length) if length else remote.size
                    _copy_stream(response, out, total, label)
        where = str(origin) if mirror is not None else remote.url
        size = tmp.stat().st_size
        if size == 0:
            raise DownloadError(f"{label}: {where} is empty (0 bytes)")
        sizes = f"{size} bytes" + (f", registered {remote.size}" if remote.size is not None else "")
        got = sha256_of(tmp)
        if remote.sha256 is None:
            if remote.size is not None and size != remote.size:
                raise DownloadError(f"{label}: size mismatch for {where}: expected {remote.size} bytes, got {size} "
                                    f"(truncated download or a different file)")
            log.warning("%s: sha256 not registered, accepted unverified (from %s): sha256=%s", label, where, got)
        elif got != remote.sha256:
            raise DownloadError(f"{label}: sha256 mismatch for {where}: expected {remote.sha256}, got {got} ({sizes})")
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return dest


def fetch(source_name: str, relative_file: str, dest: str | os.PathLike,
          mirror: str | os.PathLike | None = None) -> Path:
    """Fetch ``relative_file`` of registered source ``source_name`` to ``dest``.

    With ``mirror`` the file is copied from ``<mirror>/<mirror_path>``; without it the
    upstream URL is downloaded (mirror-only sources raise, saying a mirror is needed). A file
    with a builder (``multivec.data.builders``) is built when the mirror is not given or lacks it.
    """
    remote = get_file(source_name, relative_file)
    label = f"{source_name}/{relative_file}"
    builder = builder_for(source_name, relative_file)
    if builder is not None and (mirror is None or not (Path(mirror) / remote.mirror_path).is_file()):
        log.info("%s: %s, so it is %s", label, "no data mirror is set" if mirror is None else
                 f"the data mirror {mirror} has no {remote.mirror_path}", builder.what)
        builder.build(Path(dest), mirror, remote.sha256, label)
        return Path(dest)
    if mirror is None and remote.url is None:
        source = get_source(source_name)
        raise DownloadError(f"{source_name}/{relative_file}: source {source_name!r} is mirror-only "
                            f"({source.note or 'no upstream URL'}). Set the config key data_mirror or "
                            f"$MULTIVEC_DATA_MIRROR to a mirror holding {remote.mirror_path!r}.")
    log.info("fetching %s/%s from %s", source_name, relative_file,
             f"mirror {mirror}" if mirror is not None else remote.url)
    return fetch_file(remote, dest, mirror, label=label)


def file_identity(source_name: str, relative_file: str) -> str:
    """The registry's identity of a file: ``sha256:<hex>``, else ``url:<url>``, else ``mirror:<path>``.

    Independent of where a data mirror lies, so copying the mirror elsewhere changes nothing.
    """
    remote = get_file(source_name, relative_file)
    if remote.sha256 is not None:
        return f"sha256:{remote.sha256}"
    if remote.url is not None:
        return f"url:{remote.url}"
    return f"mirror:{remote.mirror_path}"


def gensim_test_dir() -> Path:
    import gensim

    return Path(gensim.__file__).resolve().parent / "test" / "test_data"


def gensim_test_file(name: str) -> Path:
    """Path of a file in the installed gensim wheel's ``gensim/test/test_data`` folder."""
    folder = gensim_test_dir()
    path = folder / name
    if not path.is_file():
        raise DownloadError(f"gensim's test data has no file {name!r} (looked in {folder}); "
                            "is gensim>=4.3 installed from a wheel that ships its tests?")
    return path


def copy_gensim_test_file(name: str, dest: str | os.PathLike) -> Path:
    """Copy ``gensim_test_file(name)`` to ``dest`` atomically."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.part")
    shutil.copyfile(gensim_test_file(name), tmp)
    os.replace(tmp, dest)
    return dest
