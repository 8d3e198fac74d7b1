"""Inspector for the encodings artifact (``artifact.py``): one folder per encoder and task,
``vectors.safetensors`` (``vectors`` + ``offsets``), ``documents.jsonl`` and ``info.json``.

It shows how many vectors each document got — for NUGGET, k = ceil(n·r) nuggets per document
(Qin & Van Durme 2023, §3.1) — and which tokens were chosen as nuggets.
"""

from __future__ import annotations

from pathlib import Path

from multivec.inspection.common import (Report, format_summary, is_dir_with, length_summary, read_json_checked,
                                        read_safetensors_header, schema, short, short_json)
from multivec.inspection.registry import inspector
from multivec.io import MalformedInputError, read_jsonl


def _offsets(path: Path):
    from safetensors import safe_open

    header = read_safetensors_header(path)  # a clear error for a truncated or garbage file
    for name in ("vectors", "offsets"):
        if name not in header:
            raise MalformedInputError(path, None, f"no {name!r} tensor (has {', '.join(sorted(header)) or 'none'})")
    with safe_open(str(path), "np") as tensors:
        offsets = tensors.get_tensor("offsets")
    return header["vectors"], offsets


@inspector("encodings", "per-document vector sets: vectors.safetensors + documents.jsonl + info.json",
           is_dir_with("vectors.safetensors", "documents.jsonl"), 90)
def inspect_encodings(path: Path, report: Report) -> None:
    vectors, offsets = _offsets(path / "vectors.safetensors")
    documents = read_jsonl(path / "documents.jsonl")
    info = read_json_checked(path / "info.json") if (path / "info.json").is_file() else {}
    if len(documents) + 1 != len(offsets):
        raise MalformedInputError(path / "documents.jsonl", None,
                                  f"{len(documents)} rows but vectors.safetensors has {len(offsets) - 1} documents")
    shape = vectors["shape"]
    per_doc = [int(offsets[i + 1] - offsets[i]) for i in range(len(documents))]
    report.line(f"documents: {len(documents)}  vectors: {shape[0]} x {shape[1] if len(shape) > 1 else 0} "
                f"({vectors['dtype']})")
    report.line(f"vectors per document: {format_summary(length_summary(per_doc))}")
    if isinstance(info, dict) and info:
        report.line("info: " + ", ".join(f"{k}={v if not isinstance(v, (dict, list)) else short_json(v, 120)}"
                                         for k, v in info.items()))
    report.line(f"documents.jsonl schema: {schema(documents)}")
    for row, count in list(zip(documents, per_doc))[:report.n]:
        line = f"  {row.get('id')}: {count} vectors"
        if "nugget_tokens" in row:
            line += f"; nugget tokens: {short(' '.join(map(str, row['nugget_tokens'])), 300)}"
        report.line(line)
