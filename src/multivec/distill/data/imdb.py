"""IMDB sentiment (Maas et al. 2011), the distillation thesis's classification task (Burian 2023,
§5.1.1): 25,000 training and 25,000 test reviews, each labelled positive or negative (12,500 each).

``read_imdb(archive)`` reads the official ``aclImdb_v1.tar.gz`` (registered as the ``imdb`` source
in ``multivec.data.sources``) without extracting it: members
``aclImdb/{train,test}/{pos,neg}/<n>_<rating>.txt`` become rows ``{"id", "text", "label"}`` with
id ``imdb_<split>_<pos|neg>_<n>``, label 1 = pos, 0 = neg; ``train/unsup`` (unlabelled reviews) and
every other member are skipped. The text is kept as released (its ``<br />`` line breaks included,
as the Hugging Face ``imdb`` copy the thesis's code reads has them). Rows are ordered by
(label, n), so the output never depends on the archive's member order.

``check_counts`` fails with the archive's name when a split or label does not have the expected
number of reviews (a truncated or different archive). ``write_splits`` writes each split as a
distillation document set with labels (``data/built/distill/eval_imdb_{train,test}.jsonl``), so every
teacher and student rule embeds it; ``read_labels`` reads a split's labels back. The head's evaluation of
each row and the table are ``multivec.distill.tables.imdb_table``'s.
"""

from __future__ import annotations

import os
import re
import tarfile
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from multivec.data.language import LanguageCheck
from multivec.io import MalformedInputError

if TYPE_CHECKING:  # for the annotations; the functions import numpy where they use it
    import numpy as np

SPLITS = ("train", "test")
LABELS = {"neg": 0, "pos": 1}
_MEMBER = re.compile(r"^(?:\./)?aclImdb/(train|test)/(pos|neg)/(\d+)_(\d+)\.txt$")


def read_imdb(archive: str | os.PathLike) -> dict[str, list[dict]]:
    """``{"train": rows, "test": rows}`` of the labelled reviews in ``archive`` (see the module docstring)."""
    archive = Path(archive)
    if not archive.is_file():
        raise FileNotFoundError(f"{archive}: no such file (the IMDB archive aclImdb_v1.tar.gz)")
    found: dict[str, list[tuple[int, int, dict]]] = {split: [] for split in SPLITS}
    languages = {split: LanguageCheck(archive, "en", f"IMDB {split} reviews") for split in SPLITS}
    try:
        with tarfile.open(archive, "r:*") as tar:
            for member in tar:
                match = _MEMBER.match(member.name)
                if not match or not member.isfile():
                    continue
                split, polarity, number, rating = match.groups()
                handle = tar.extractfile(member)
                try:
                    text = handle.read().decode("utf-8")
                except UnicodeDecodeError as err:
                    raise MalformedInputError(archive, None, f"member {member.name}: not UTF-8 ({err})") from None
                if not text.strip():
                    raise MalformedInputError(archive, None, f"member {member.name}: empty review")
                languages[split].add(text, member.name)
                label = LABELS[polarity]
                row = {"id": f"imdb_{split}_{polarity}_{number}", "text": text.strip(), "label": label,
                       "rating": int(rating)}
                found[split].append((label, int(number), row))
    except (tarfile.TarError, EOFError, OSError) as err:
        raise MalformedInputError(archive, None, f"not a readable tar archive ({err})") from None
    for check in languages.values():
        check.finish()
    out = {}
    for split, rows in found.items():
        rows.sort(key=lambda item: item[:2])
        ids = [row["id"] for _, _, row in rows]
        if len(set(ids)) != len(ids):
            duplicate = next(i for i, n in Counter(ids).items() if n > 1)
            raise MalformedInputError(archive, None, f"review {duplicate} occurs twice")
        out[split] = [row for _, _, row in rows]
    return out


def check_counts(splits: dict[str, list[dict]], per_split: int | None, archive: str | os.PathLike = "") -> dict:
    """``{split: {"reviews", "pos", "neg"}}``; raises when a split does not hold ``per_split`` reviews,
    half of them positive (``per_split`` None: only that no split or label is empty)."""
    counts = {}
    for split in SPLITS:
        rows = splits.get(split, [])
        by_label = Counter(row["label"] for row in rows)
        counts[split] = {"reviews": len(rows), "pos": by_label[1], "neg": by_label[0]}
        if per_split is None:
            if not by_label[0] or not by_label[1]:
                raise MalformedInputError(archive, None, f"IMDB {split}: no {'neg' if not by_label[0] else 'pos'} "
                                                         f"reviews ({counts[split]})")
        elif counts[split] != {"reviews": per_split, "pos": per_split // 2, "neg": per_split - per_split // 2}:
            raise MalformedInputError(archive, None, f"IMDB {split}: expected {per_split} reviews, half positive; "
                                                     f"found {counts[split]}")
    return counts


def write_splits(splits: dict[str, list[dict]], paths: dict[str, str | os.PathLike]) -> None:
    """Each split's rows ``{"id", "text", "label"}`` to its JSONL path (the distillation's document format
    plus the label, so every embedding rule reads it as a document set)."""
    from multivec.io import write_jsonl

    for split in SPLITS:
        write_jsonl(paths[split], [{"id": r["id"], "text": r["text"], "label": r["label"]} for r in splits[split]])


def read_labels(path: str | os.PathLike) -> tuple[list[str], "np.ndarray"]:
    """``(ids, labels)`` of an IMDB split file written by ``write_splits``: string ids, each once, and
    integer labels 0 or 1 (``true`` is not 1); errors name file:line."""
    import numpy as np

    from multivec.io import FirstSeen, iter_jsonl

    ids, labels, seen = [], [], FirstSeen(path, "review id")
    for number, row in iter_jsonl(path):
        label = row.get("label")
        if not isinstance(row.get("id"), str) or type(label) is not int or label not in (0, 1):
            raise MalformedInputError(path, number, f"each row needs a string 'id' and a 'label' 0 or 1 (an integer), "
                                                    f"got id {row.get('id')!r}, label {label!r}")
        seen.add(row["id"], number)
        ids.append(row["id"])
        labels.append(row["label"])
    if not ids:
        raise MalformedInputError(path, None, "no reviews")
    return ids, np.array(labels, dtype=np.int64)
