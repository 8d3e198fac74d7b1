"""Where a distilled student's embedding space went: its geometry against the untrained student and the teachers.

A student can lose evaluation score in two different ways: by imitating a weak teacher (its document
similarities come to agree with the teacher's) or by a change the teacher did not ask for. Over the documents of
an evaluation task, every row of ``results/distill_table`` gets three numbers, each over all pairs of documents:

- ``mean_cosine``: the mean pairwise cosine of the row's embeddings (statistic ``pair_mean``). A rise means the
  embeddings share a growing common direction (anisotropy), which narrows the cosine range every ranking reads.
- ``agreement_structural`` / ``agreement_contextual``: the Pearson correlation between the row's pairwise cosines
  and the structural / contextual teacher's (statistic ``pearson``): how far the row's notion of "similar
  documents" is the teacher's. Distillation that works raises the agreement with the teacher it learns from.

CIs resample documents and keep the pairs among them (``multivec.statistics.resampling``, as the Lee
correlations); each student is compared with the untrained student by the paired tests of the statistics layer.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

GEOMETRY_METRICS = ("mean_cosine", "agreement_structural", "agreement_contextual")
TEACHER_KINDS = {"agreement_structural": "structural_teacher", "agreement_contextual": "contextual_teacher"}


def pair_cosines(vectors: np.ndarray) -> np.ndarray:
    """Cosine of every pair i < j of ``vectors`` (n, d), in ``np.triu_indices(n, 1)`` order.

    numpy in the input's precision, not ``multivec.metrics.maxsim.cosine`` / ``cosine_matrix`` (torch
    float32, another summation order): those differ in the last bits (up to 7e-8 on float32 embeddings),
    and the written geometry tables come from this computation."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError("a zero embedding has no cosine")
    unit = vectors / norms
    return (unit @ unit.T)[np.triu_indices(len(vectors), 1)]


def geometry_measurements(entries: Sequence[Mapping[str, Any]], tasks: Sequence[str]) -> list:
    """``entries``: the rows of the distillation table (``{"name", "kind", "seed", "embeddings": {task:
    folder}}``). One ``Measurement`` per (row, seed, task, metric), named ``<task>_<metric>``; the teachers
    are the entries of kind ``structural_teacher`` and ``contextual_teacher``."""
    from multivec.distill.embeddings import read_embeddings, vectors_for
    from multivec.distill.tables.statistics import entry_folder
    from multivec.statistics import Measurement

    teachers = {kind: [e for e in entries if e["kind"] == kind] for kind in TEACHER_KINDS.values()}
    for kind, found in teachers.items():
        if len(found) != 1:
            raise ValueError(f"distill geometry: expected one {kind} row, found {len(found)}")
    out = []
    for task in tasks:
        ids = read_embeddings(entry_folder(teachers["structural_teacher"][0], task))[0]
        if len(ids) < 3:
            raise ValueError(f"distill geometry on {task}: {len(ids)} documents; pairs need at least 3")
        upper = np.triu_indices(len(ids), 1)
        units = [f"{ids[i]}|{ids[j]}" for i, j in zip(*upper)]
        teacher_cosines = {metric: pair_cosines(vectors_for(entry_folder(teachers[kind][0], task), ids))
                           for metric, kind in TEACHER_KINDS.items()}
        for entry in entries:
            cosines = pair_cosines(vectors_for(entry_folder(entry, task), ids))
            seed = entry.get("seed")
            out.append(Measurement(entry["name"], f"{task}_mean_cosine", "pair_mean", units, cosines, seed))
            for metric, teacher in teacher_cosines.items():
                out.append(Measurement(entry["name"], f"{task}_{metric}", "pearson", units,
                                       np.column_stack([cosines, teacher]), seed))
    return out


def geometry_comparisons(entries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every trained student against the untrained student it starts from."""
    students = list(dict.fromkeys(e["name"] for e in entries if e["kind"] == "student"))
    untrained = [e["name"] for e in entries if e["kind"] == "untrained_student"]
    if not untrained:
        raise ValueError("distill geometry: no untrained student row to compare with")
    return [{"row": name, "against": [untrained[0]]} for name in students]


def write_geometry(entries: Sequence[Mapping[str, Any]], tasks: Sequence[str], statistics: Mapping[str, Any],
                   csv_path: str | os.PathLike, md_path: str | os.PathLike, tests_path: str | os.PathLike,
                   note: str = "") -> "Any":
    """``results/distill_geometry.{csv,md}`` and ``_tests.csv``: one row per table row, ``<task>_<metric>``
    columns with their CIs, and the paired comparisons of each student with the untrained student."""
    import pandas as pd

    from multivec.io.markdown_table import markdown_table
    from multivec.statistics import table_statistics
    from multivec.statistics.tables import estimate_cell

    measurements = geometry_measurements(entries, tasks)
    stats = table_statistics(measurements, geometry_comparisons(entries), alpha=statistics["alpha"],
                             confidence=statistics["confidence"], n_resamples=statistics["bootstrap_resamples"],
                             n_permutations=statistics["permutation_resamples"])
    columns = [f"{task}_{metric}" for task in tasks for metric in GEOMETRY_METRICS]
    rows = list(dict.fromkeys(e["name"] for e in entries))
    frame = stats.add_columns(pd.DataFrame({"row": rows, **{c: np.nan for c in columns}}), "row", columns,
                              require=True)
    frame.to_csv(csv_path, index=False)
    stats.write_tests(tests_path)
    lines = ["# Document embedding by distillation: the embedding space of every row", ""]
    if note:
        lines += [note, ""]
    lines += [f"Over all pairs of each task's documents: the mean pairwise cosine, and the Pearson correlation of "
              f"the row's pairwise cosines with each teacher's. Cells: mean [{statistics['confidence']:.0%} CI, "
              f"documents resampled with the pairs among them].", ""]
    lines += markdown_table(["row", *columns], ([f"{record['row']}", *(estimate_cell(record, c, 3) for c in columns)]
                                                for record in frame.to_dict("records")))
    lines.append("")
    lines += stats.markdown_tests(digits=3)
    Path(md_path).write_text("\n".join(lines).rstrip("\n") + "\n")
    return frame
