"""One entry point for every kind: ``export_model(src, dest, kind=None)`` detects the kind of a trained folder
(``multivec.interop.folders.detect_kind``) unless given, and calls its exporter. ``dest`` must not exist yet
or be empty (an export never mixes with another model's files)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from multivec.interop.folders import KINDS, ExportError, detect_kind


def export_model(src: str | os.PathLike, dest: str | os.PathLike, kind: str | None = None, *,
                 metrics: str | os.PathLike | None = None, max_seq_length: int | None = None,
                 device: str = "cpu") -> dict[str, Any]:
    """Export ``src`` to ``dest``; returns what was written (kind, modules, whether remote code is needed...)."""
    from multivec.interop.distill_export import export_student, export_teacher
    from multivec.interop.nugget_export import export_nugget
    from multivec.interop.subencoder_export import export_subencoder
    from multivec.interop.tsdae_export import export_tsdae

    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ExportError(dest, "exists and is not empty: choose a new folder")
    if not Path(src).is_dir() and (kind not in (None, "teacher") or os.sep in str(src) or str(src).startswith(".")):
        raise ExportError(src, "no such model folder")
    if kind is None:
        kind = detect_kind(src) if Path(src).is_dir() else "teacher"  # "minilm" / "mpnet": a named teacher
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r}: expected one of {', '.join(KINDS)}")
    if kind == "teacher":
        return export_teacher(src, dest, max_seq_length=max_seq_length, metrics=metrics, device=device)
    exporter = {"student": export_student, "tsdae": export_tsdae, "nugget": export_nugget,
                "subencoder": export_subencoder}[kind]
    return exporter(src, dest, metrics=metrics, device=device)
