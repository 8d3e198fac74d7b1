"""Inspectors for the distillation teachers' artifacts (Burian 2023, §3.2, §5): the embeddings
folders (``multivec.distill.embeddings``), the demo evaluation tasks' gold folders
(``multivec.distill.documents``) and saved Paragraph Vector models
(``multivec.distill.paragraph_vector.save_models``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from multivec.inspection.common import (Report, format_summary, is_dir_with, length_summary, read_json_checked,
                                        short_json)
from multivec.inspection.registry import inspector


@inspector("distill embeddings", "one vector per document: embeddings.safetensors + ids.txt + meta.json",
           is_dir_with("embeddings.safetensors", "ids.txt"), 90)
def inspect_embeddings(path: Path, report: Report) -> None:
    from multivec.distill.embeddings import read_embeddings

    ids, vectors, meta = read_embeddings(path)
    report.line(f"documents: {len(ids)}  dimension: {vectors.shape[1]}  (float32)")
    norms = np.linalg.norm(vectors, axis=1)
    report.line(f"vector norms: {format_summary(length_summary([round(float(x), 4) for x in norms]))}")
    report.line("meta: " + ", ".join(f"{k}={short_json(v, 80)}" for k, v in meta.items()))
    for doc_id, vector in list(zip(ids, vectors))[:report.n]:
        report.line(f"  {doc_id}: [{', '.join(f'{x:.3f}' for x in vector[:5])}{', ...' if len(vector) > 5 else ''}]")


def _is_eval_task(path: Path) -> bool:
    return path.is_dir() and ((path / "similarities.txt").is_file() or (path / "labels.jsonl").is_file())


@inspector("distill evaluation task", "a demo evaluation task's gold: similarities.txt (Lee) or labels.jsonl "
           "(polarity)", _is_eval_task, 80)
def inspect_eval_task(path: Path, report: Report) -> None:
    from multivec.distill.documents import read_lee_similarities
    from multivec.io import read_jsonl

    if (path / "similarities.txt").is_file():
        ratings = read_lee_similarities(path / "similarities.txt")
        upper = ratings[np.triu_indices(len(ratings), k=1)]
        report.line(f"Lee similarity: {len(ratings)} documents, {len(upper)} rated pairs; "
                    f"ratings {format_summary(length_summary([round(float(x), 3) for x in upper]))}")
    else:
        rows = read_jsonl(path / "labels.jsonl")
        labels = [row.get("label") for row in rows]
        report.line(f"labelled documents: {len(rows)}; per label: "
                    + ", ".join(f"{label}={labels.count(label)}" for label in sorted(set(labels), key=str)))
    documents = path.with_name(path.name + ".jsonl")
    if documents.is_file():
        report.line(f"documents: {documents}")
    meta = path.parent / "meta.json"
    if meta.is_file():
        report.line(f"builder: {short_json(read_json_checked(meta).get('builder'), 80)}")


@inspector("paragraph vector model", "a saved Paragraph Vector variant: variant.json + part<i>.model (gensim)",
           is_dir_with("variant.json", "part0.model"), 80)
def inspect_pv_model(path: Path, report: Report) -> None:
    record = read_json_checked(path / "variant.json")
    parts = record.get("parts", [])
    report.line(f"variant: {record.get('name')}  parts: {len(parts)}  dimension: "
                f"{sum(int(p.get('vector_size', 0)) for p in parts)}  epochs: {record.get('epochs')}  "
                f"seed: {record.get('seed')}")
    for i, part in enumerate(parts):
        size = sum(f.stat().st_size for f in path.glob(f"part{i}.model*"))
        report.line(f"  part{i}: {short_json(part, 100)}  ({size:,} bytes on disk)")
    for key in ("n_documents", "vocabulary", "documents", "seconds"):
        if key in record:
            report.line(f"{key}: {short_json(record[key], 80)}")
