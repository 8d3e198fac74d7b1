"""The distillation table (Burian 2023, §5 at demo scale; the thesis's hypothesis of §3: a student trained
with both teachers beats either teacher alone).

Rows (named by role, so that the claims and comparisons name the same rows at every scale; ``model`` says
which teacher): the structural teacher alone, the contextual teacher alone, the two concatenated, the
untrained student, and the student trained with L_S only, L_C only and both (one row per trained run of the
config, each at every seed of the seed set). Columns: every demo task's metrics
(``multivec.distill.evaluation.demo_tasks.METRICS``) as the seed mean with its CI and seed SD, computed from the
per-unit scores (``statistics``), each row's embedding dimension and training minutes. The thesis reports no
results (its results chapter is empty), so there are no ``paper_*`` columns; its hypothesis is claim D1 of
``config/claims.yaml``, whose verdict ends the Markdown.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from multivec.io import read_json
from multivec.io.markdown_table import markdown_table

ROW_KINDS = ("structural_teacher", "contextual_teacher", "teachers_concatenated", "untrained_student",
             "student")


class SanityRowError(ValueError):
    """The frozen-backbone student's embeddings differ from the untrained student's (names both folders)."""


def check_frozen_rows(entries: Sequence[dict[str, Any]], tasks: Sequence[str]) -> int:
    """Every entry with ``"frozen": true`` (heads trained on a frozen backbone: the sanity row) must hold
    exactly the untrained student's vectors on every task, else the scored vector is not the student's own
    embedding; returns the number of (entry, task) pairs checked."""
    from multivec.distill.embeddings import read_embeddings
    from multivec.distill.tables.statistics import entry_folder

    untrained = [e for e in entries if e["kind"] == "untrained_student"]
    checked = 0
    for entry in (e for e in entries if e.get("frozen")):
        if not untrained:
            raise SanityRowError(f"distill table: row {entry['name']!r} has its backbone frozen but the table has "
                                 "no untrained student to compare it with")
        for task in tasks:
            frozen_folder, reference = entry_folder(entry, task), entry_folder(untrained[0], task)
            frozen_ids, frozen, _ = read_embeddings(frozen_folder)
            ids, vectors, _ = read_embeddings(reference)
            if list(frozen_ids) != list(ids) or not np.array_equal(np.asarray(frozen), np.asarray(vectors)):
                raise SanityRowError(f"{frozen_folder} differs from {reference}: a student whose backbone was "
                                     "frozen must embed exactly as the untrained one (is a head scored?)")
            checked += 1
    return checked


def frozen_check(entries: Sequence[dict[str, Any]], tasks: Sequence[str]) -> dict[str, Any]:
    """``check_frozen_rows`` as a record (rule ``distill_frozen_check``, ``results/distill_frozen_check.json``):
    the frozen rows checked, the untrained row they equal, the tasks and the number of (entry, task) pairs; the
    table reads it, so that it re-renders without the embeddings."""
    checked = check_frozen_rows(entries, tasks)
    return {"frozen_rows": sorted({e["name"] for e in entries if e.get("frozen")}),
            "equal_to": next((e["name"] for e in entries if e["kind"] == "untrained_student"), None),
            "tasks": list(tasks), "pairs_checked": checked}


def length_lines(entries: Sequence[dict[str, Any]], tasks: Sequence[str]) -> list[str]:
    """Markdown lines: per task, how many documents are longer than the structural teacher's input limit and
    than the student's ``max_tokens`` (truncated), from the untrained student's and the structural teacher's
    embedding metas (``lengths``, ``truncated_share``)."""
    from multivec.distill.embeddings import read_meta
    from multivec.distill.tables.statistics import entry_folder

    student = next((e for e in entries if e["kind"] == "untrained_student"), None)
    teacher = next((e for e in entries if e["kind"] == "structural_teacher"), None)
    if student is None:
        return []
    lines = ["Documents longer than each model's input limit, per task (student tokens without specials; the "
             "structural teacher's own count in brackets):", ""]
    rows = []
    for task in tasks:
        meta = read_meta(entry_folder(student, task))
        lengths = meta.get("lengths") or {}
        if not lengths:
            continue
        teacher_share = read_meta(entry_folder(teacher, task)).get("truncated_share") if teacher else None
        over = lengths.get("longer_than_structural_teacher")
        over_cell = (f"{over} ({100 * lengths['longer_than_structural_teacher_share']:.1f}%)" if over is not None
                     else "")
        if teacher_share is not None:
            over_cell += f" [{100 * float(teacher_share):.1f}%]"
        rows.append([f"{task}", f"{lengths['documents']}", f"{lengths['max_length']}", over_cell,
                     f"{lengths['truncated']} ({100 * lengths['truncated_share']:.1f}%) of > "
                     f"{lengths['student_max_tokens']}"])
    return lines + markdown_table(["task", "documents", "longest", "> structural teacher",
                                   "truncated by the student"], rows) + [""]


def concatenate_embeddings(folders: Sequence[str | os.PathLike], out: str | os.PathLike) -> None:
    """One embeddings folder whose vectors are the L2-normalised vectors of ``folders`` side by side (so that
    under cosine neither teacher outweighs the other by its scale); ids must agree (order may differ)."""
    from multivec.distill.embeddings import read_embeddings, write_embeddings

    first_ids, parts, models = None, [], []
    for folder in folders:
        ids, vectors, meta = read_embeddings(folder)
        vectors = np.asarray(vectors, dtype=np.float32)
        if first_ids is None:
            first_ids = list(ids)
        else:
            index = {doc_id: row for row, doc_id in enumerate(ids)}
            missing = [d for d in first_ids if d not in index]
            if missing or len(ids) != len(first_ids):
                raise ValueError(f"{folder}: its ids differ from {folders[0]}'s "
                                 f"(e.g. {missing[0] if missing else 'an extra id'!r}); cannot concatenate")
            vectors = vectors[[index[d] for d in first_ids]]
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        parts.append(vectors / np.maximum(norms, 1e-12))
        models.append(str(meta.get("model", folder)))
    stacked = np.concatenate(parts, axis=1).astype(np.float32)
    write_embeddings(out, first_ids, stacked, {"model": " + ".join(models), "dimension": int(stacked.shape[1]),
                                               "n": len(first_ids), "truncated_share": None,
                                               "concatenated_from": [str(f) for f in folders]})


def training_minutes(summary_path: str | os.PathLike | None) -> float | None:
    if summary_path is None:
        return None
    summary = read_json(summary_path)
    if "train_minutes" not in summary:
        raise KeyError(f"{summary_path}: no 'train_minutes' (not a training summary)")
    return float(summary["train_minutes"])


def build_rows(entries: Sequence[dict[str, Any]], tasks: Sequence[str]) -> list[dict[str, Any]]:
    """One table row per row name from ``entries`` (one per (row, seed): ``{"name", "kind", "seed",
    "embeddings": {task: folder}, "summary": path | None, "loss": str, "model": str}``): kind, loss, the
    teacher's model, every task metric (empty: the seed means come from the unit file,
    ``statistics.with_statistics``), the embedding dimension and the training minutes averaged
    over the row's seeds. Reads each folder's ``meta.json`` only (``read_meta``: a committed copy will do)."""
    from multivec.distill.embeddings import read_meta
    from multivec.distill.evaluation.demo_tasks import METRICS
    from multivec.distill.tables.statistics import entry_folder

    by_name: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        if entry["kind"] not in ROW_KINDS:
            raise ValueError(f"distill table row {entry['name']!r}: kind {entry['kind']!r} not one of "
                             f"{', '.join(ROW_KINDS)}")
        by_name.setdefault(entry["name"], []).append(entry)
    table = []
    for name, group in by_name.items():
        first = group[0]
        out: dict[str, Any] = {"row": name, "kind": first["kind"], "loss": first.get("loss", ""),
                               "model": first.get("model", "")}
        out.update({metric: float("nan") for task in tasks for metric in METRICS[task]})
        dimension = None
        for entry in group:
            for task in tasks:
                folder = entry_folder(entry, task)
                found = int(read_meta(folder)["dimension"])
                if dimension is not None and found != dimension:
                    raise ValueError(f"{folder}: dimension {found}, but the row's other tasks have {dimension}")
                dimension = found
        out["dimension"] = dimension
        minutes = [m for m in (training_minutes(e.get("summary")) for e in group) if m is not None]
        out["train_minutes"] = round(float(np.mean(minutes)), 2) if minutes else ""
        table.append(out)
    return table


def write_table(table: Sequence[dict[str, Any]], tasks: Sequence[str], units: str | os.PathLike,
                comparisons: Sequence[dict[str, Any]] | None, statistics: dict[str, Any],
                csv_path: str | os.PathLike, md_path: str | os.PathLike, tests_path: str | os.PathLike,
                note: str = "", claims_file: str | os.PathLike | None = None,
                claims: dict[str, Any] | None = None, entries: Sequence[dict[str, Any]] = (),
                frozen_checked: dict[str, Any] | None = None) -> None:
    """``results/distill_table.{csv,md}`` and ``_tests.csv``: ``table`` (``build_rows``) with every metric
    from the per-unit scores in ``units`` (seed mean, CI, seed SD), the declared comparisons, and the
    verdicts of the claims on this table (``config/claims.yaml``, ``claims_params()``). ``entries``
    (``build_rows``'s input): the documents' lengths against each model's limit are reported; ``frozen_checked``
    (``frozen_check``'s record): the frozen-backbone row's check against the untrained one is stated."""
    import pandas as pd

    from multivec.distill.evaluation.demo_tasks import METRICS
    from multivec.distill.tables.statistics import (
        claim_lines,
        markdown_table,
        statistics_note,
        with_statistics,
        write_frame,
    )

    if not table:
        raise ValueError("distill table: no rows")
    metrics = [metric for task in tasks for metric in METRICS[task]]
    frame, stats = with_statistics(pd.DataFrame(list(table)), "row", metrics, units, comparisons, statistics)
    write_frame(frame, csv_path)
    stats.write_tests(tests_path)
    digits = {m: 3 if m.startswith("lee_") else 2 for m in metrics}
    lines = ["# Document embedding by distillation (Burian 2023): teachers and students, demo tasks", ""]
    if note:
        lines += [note, ""]
    lines += markdown_table(frame, ["row", "model", "loss", *metrics, "dimension", "n_seeds"], digits)
    lines += ["", statistics_note(stats, statistics["confidence"]), ""]
    if frozen_checked and frozen_checked["pairs_checked"]:
        lines += [f"Sanity row: the student trained with its backbone frozen embeds exactly as the untrained "
                  f"student on all {frozen_checked['pairs_checked']} task(s) (checked vector by vector).", ""]
    if entries:
        lines += length_lines(entries, tasks)
    tests = stats.markdown_tests()
    lines += (tests + [""]) if tests else []
    lines += claim_lines(claims_file, {"distill_table": units}, claims)
    Path(md_path).write_text("\n".join(lines).rstrip("\n") + "\n")
