"""Inspectors for the data the pipeline downloads and builds (``python -m multivec inspect``).

- training corpora ``data/built/corpora/{autoencoding,translation}/{train,dev}.jsonl``
  (``corpora.py``, ``translation_corpus.py``): the documents NUGGET's AE and MT objectives
  reconstruct or translate (NUGGET §4);
- downloads in ``data/raw/``: compressed dumps (``.bz2``/``.gz``) and archives (``.zip``,
  ``.tgz``/``.tar.gz``) as ``download.py`` and ``archives.py`` handle them.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from multivec.inspection.common import CJK, Report, jsonl_first_row_has, load_rows_checked, print_field_stats, \
    schema, short, text_field_stats
from multivec.inspection.registry import inspector
from multivec.io import MalformedInputError


@inspector("corpus", "JSONL documents: id, source, target (autoencoding or translation)",
           jsonl_first_row_has("id", "source", "target"), 70)
def inspect_corpus(path: Path, report: Report) -> None:
    rows = load_rows_checked(path, {"id": str, "source": str, "target": str}, "corpus row")
    same = sum(r["source"] == r["target"] for r in rows)
    if rows and same == len(rows):
        kind = "autoencoding (target == source)"
    elif any(CJK.search(r["target"]) for r in rows[:50]):
        kind = "translation (English -> Chinese)"
    else:
        kind = "sequence-to-sequence"
    report.line(f"rows: {len(rows)}  kind: {kind}")
    report.line(f"schema: {schema(rows)}")
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        report.line(f"WARNING: {len(ids) - len(set(ids))} duplicate ids")
    report.line("lengths:")
    print_field_stats(text_field_stats(rows, ["source", "target"], report.load_tokenizer()), report)
    for row in rows[:report.n]:
        report.line(f"  {row['id']}")
        report.line(f"    source: {short(row['source'])}")
        if row["target"] != row["source"]:
            report.line(f"    target: {short(row['target'])}")


def _is_compressed_file(path: Path) -> bool:
    return path.is_file() and path.suffix in (".bz2", ".gz") and not path.name.endswith(".tar.gz")


@inspector("compressed", "a .bz2/.gz download (e.g. a Wikipedia dump): sizes and the first lines",
           _is_compressed_file, 40)
def inspect_compressed(path: Path, report: Report) -> None:
    import bz2
    import gzip
    import zlib

    opener = bz2.open if path.suffix == ".bz2" else gzip.open
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
            head = list(itertools.islice(handle, max(report.n, 5)))
    except (OSError, EOFError, zlib.error) as err:
        raise MalformedInputError(path, None, f"cannot decompress: {err}") from None
    report.line(f"compressed bytes: {path.stat().st_size:,}")
    for line in head:
        report.line(f"  {short(line.rstrip())}")


def _is_archive(path: Path) -> bool:
    return path.is_file() and (path.suffix in (".zip", ".tgz", ".tar") or path.name.endswith(".tar.gz"))


@inspector("archive", "a .zip/.tgz/.tar download (WikiText-103, ParaBank, WMT dev): its members",
           _is_archive, 40)
def inspect_archive(path: Path, report: Report, limit: int = 20) -> None:
    import tarfile
    import zipfile

    try:
        if path.suffix == ".zip":
            with zipfile.ZipFile(path) as archive:
                members = [(i.filename, i.file_size) for i in archive.infolist() if not i.is_dir()]
        else:
            with tarfile.open(path) as archive:
                members = [(m.name, m.size) for m in archive.getmembers() if m.isfile()]
    except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError) as err:
        raise MalformedInputError(path, None, f"not a readable archive: {err}") from None
    total = sum(size for _, size in members)
    report.line(f"members: {len(members)} files, {total:,} bytes uncompressed ({path.stat().st_size:,} compressed)")
    for name, size in members[:max(report.n, limit)]:
        report.line(f"  {name} ({size:,} bytes)")
    if len(members) > max(report.n, limit):
        report.line(f"  ... {len(members) - max(report.n, limit)} more")
