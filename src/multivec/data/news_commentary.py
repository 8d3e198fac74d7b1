"""Reader of News Commentary v14 en-zh (``en<TAB>zh`` a line, blank lines between documents): the paper-scale
English -> Chinese training text (NUGGET §4 trains on WMT19 en-zh; this is its part that keeps documents).

Its documents feed both the MT corpus (``translation_corpus``) and, English side only, the AE corpus
(``corpora.news_commentary_english_paragraphs``), so the reader lives below both.
"""

from __future__ import annotations

import gzip
import logging
import os
import zlib
from pathlib import Path
from typing import Iterator

from tqdm import tqdm

from multivec.data.language import LanguageCheck
from multivec.data.records import ParallelPair
from multivec.io import MalformedInputError, decode_line

log = logging.getLogger(__name__)


def _open_text(path: Path):
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    return open(path, "rb")


def read_news_commentary_tsv(path: str | os.PathLike,
                             stats=None) -> Iterator[tuple[str, list[ParallelPair]]]:
    """Documents ``(doc_id, pairs)`` of a News Commentary ``en<TAB>zh`` file (``.tsv`` or ``.tsv.gz``).

    A line empty on both sides separates documents. Lines with one side empty, or with
    other than two tab-separated fields, are misaligned: they are skipped and counted
    (logged with the first few line numbers). A non-UTF-8 line or a control character raises naming file and
    line (``multivec.io.decode_line``, which also drops a leading byte-order mark with a WARNING);
    so does a truncated or corrupt gzip stream (naming the last line read), and a file whose
    first column is not English or whose second is not Chinese (``LanguageCheck``, checked
    when the file has been read). ``stats``: anything with a ``skipped_lines`` count (e.g.
    ``translation_corpus.TranslationStats``) receives the number of skipped lines.
    """
    path = Path(path)
    documents = 0
    pairs: list[ParallelPair] = []
    skipped: list[int] = []
    languages = {"en": LanguageCheck(path, "en", "en (first column)"),
                 "zh": LanguageCheck(path, "zh", "zh (second column)")}

    def flush():
        nonlocal pairs, documents
        if pairs:
            yield f"doc{documents:06d}", pairs
            documents += 1
            pairs = []

    number = 0
    with _open_text(path) as handle:
        lines = iter(tqdm(handle, desc=f"reading {path.name}", unit=" lines", leave=False))
        while True:
            try:
                raw = next(lines, None)
            except (EOFError, OSError, zlib.error) as err:
                raise MalformedInputError(path, number + 1, f"truncated or corrupt compressed file ({err})") from None
            if raw is None:
                break
            number += 1
            line = decode_line(raw, path, number)
            fields = line.split("\t")
            if not line.strip():
                yield from flush()
                continue
            if len(fields) != 2:
                skipped.append(number)
                continue
            en, zh = " ".join(fields[0].split()), fields[1].strip()
            if not en and not zh:
                yield from flush()
            elif not en or not zh:
                skipped.append(number)
            else:
                languages["en"].add(en, number)
                languages["zh"].add(zh, number)
                pairs.append(ParallelPair(f"doc{documents:06d}", len(pairs), en, zh))
        yield from flush()
    for check in languages.values():
        check.finish()
    if skipped:
        log.warning("%s: skipped %d misaligned lines (one side empty or not 2 tab-separated fields), e.g. lines %s",
                    path, len(skipped), ", ".join(map(str, skipped[:5])))
    if stats is not None:
        stats.skipped_lines += len(skipped)
