"""Inspectors for the distillation teachers' artifacts (Burian 2023, §3.2, §5): the embeddings
folders (``multivec.distill.embeddings``), the demo evaluation tasks' gold folders
(``multivec.distill.data.documents``) and saved Paragraph Vector models
(``multivec.distill.teachers.paragraph_vector.save_models``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from multivec.inspection.common import (Report, format_summary, is_dir_with, length_summary, read_json_checked,
                                        read_safetensors_header, short_json)
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
    from multivec.distill.data.documents import read_lee_similarities
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


def _is_pv_model(path: Path) -> bool:
    return path.is_dir() and (path / "variant.json").is_file() and \
        ((path / "part0.json").is_file() or (path / "part0.model").is_file())


@inspector("paragraph vector model", "a saved Paragraph Vector variant: variant.json + part<i>.safetensors "
           "(vectors, output weights, counts) + part<i>.json (vocabulary, hyper-parameters)", _is_pv_model, 80)
def inspect_pv_model(path: Path, report: Report) -> None:
    from multivec.distill.teachers.paragraph_vector import pickled_parts

    record = read_json_checked(path / "variant.json")
    parts = record.get("parts", [])
    report.line(f"variant: {record.get('name')}  parts: {len(parts)}  dimension: "
                f"{sum(int(p.get('vector_size', 0)) for p in parts)}  epochs: {record.get('epochs')}  "
                f"seed: {record.get('seed')}")
    for pickled in pickled_parts(path):  # never opened: unpickling could run code
        report.line(f"  {pickled.name}: a gensim pickle (old format), refused by load_models; delete {path} "
                    "and rerun the paragraph_vector_model rule")
    for i, part in enumerate(parts):
        report.line(f"  part{i}: {short_json(part, 100)}")
        tensors, meta = path / f"part{i}.safetensors", path / f"part{i}.json"
        if not (tensors.is_file() and meta.is_file()):
            report.line(f"    missing {tensors.name} or {meta.name}")
            continue
        saved = read_json_checked(meta)
        shapes = {name: entry["shape"] for name, entry in sorted(read_safetensors_header(tensors).items())}
        words, documents = shapes.get("wv.vectors", [0, 0]), shapes.get("dv.vectors", [0, 0])
        report.line(f"    {tensors.name} ({tensors.stat().st_size:,} bytes): {words[0]} words x {words[1]}, "
                    f"{documents[0]} documents x {documents[1]}; "
                    + ", ".join(f"{n} {s}" for n, s in shapes.items() if n not in ("wv.vectors", "dv.vectors")))
        attributes = saved.get("attributes", {}) if isinstance(saved, dict) else {}
        vocabulary = saved.get("wv", {}).get("index_to_key", []) if isinstance(saved, dict) else []
        report.line(f"    {meta.name} ({meta.stat().st_size:,} bytes): gensim {saved.get('gensim')}, "
                    + ", ".join(f"{k}={attributes.get(k)}" for k in ("dm_concat", "window", "negative", "hs",
                                                                     "min_count", "epochs", "corpus_count"))
                    + f"; most frequent words: {short_json(vocabulary[:report.n], 80)}")
    for key in ("n_documents", "vocabulary", "documents", "seconds"):
        if key in record:
            report.line(f"{key}: {short_json(record[key], 80)}")
