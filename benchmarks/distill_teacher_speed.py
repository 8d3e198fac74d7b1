"""Structural teacher speed (Burian 2023, §3.2.1): ``multivec.distill.teachers.sbert.embed_documents``
(one tokenization, batches sorted by token count, each padded to its own longest document) against
``SentenceTransformer.encode`` on the same documents, same model, batch size and token limit.
Vectors agree to 1e-4; the CSV has both timings, wall and CPU seconds (best of --repeats).

    python benchmarks/distill_teacher_speed.py [--model minilm] [--documents data/built/distill/train.jsonl]
        [--n 200] [--threads 1] [--out results/benchmarks/distill_teacher_speed.csv]

The documents default to the distillation training documents (the demo builds them with
``snakemake data/built/distill/train.jsonl``); shuffled with a fixed seed so that the input order
carries no length pattern.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from multivec.distill.data.documents import read_documents
from multivec.distill.teachers.sbert import embed_documents, load_teacher
from multivec.io import write_csv


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--documents", default="data/built/distill/train.jsonl")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default="results/benchmarks/distill_teacher_speed.csv")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    docs = read_documents(args.documents)
    rng = np.random.default_rng(0)
    texts = [docs[i]["text"] for i in rng.permutation(len(docs))[:args.n]]
    model = load_teacher(args.model)
    embed_documents(model, texts[:4], batch_size=args.batch_size, show_progress=False)  # warm-up

    # Wall seconds, and CPU seconds of this process (the fairer number on a machine shared with other jobs).
    timings = {"ours": [], "sentence_transformers": []}
    cpu = {"ours": [], "sentence_transformers": []}
    for _ in range(args.repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        ours = embed_documents(model, texts, batch_size=args.batch_size, show_progress=False)
        timings["ours"].append(time.perf_counter() - start)
        cpu["ours"].append(time.process_time() - start_cpu)
        start, start_cpu = time.perf_counter(), time.process_time()
        reference = model.encode(texts, batch_size=args.batch_size, show_progress_bar=False)
        timings["sentence_transformers"].append(time.perf_counter() - start)
        cpu["sentence_transformers"].append(time.process_time() - start_cpu)
    difference = float(np.abs(ours.vectors - reference).max())
    if difference > 1e-4:
        raise SystemExit(f"vectors differ by {difference} (> 1e-4)")
    rows = [{"implementation": name, "model": args.model, "documents": len(texts), "batch_size": args.batch_size,
             "threads": args.threads, "max_seq_length": ours.max_seq_length,
             "truncated_share": round(ours.truncated_share, 4), "best_seconds": round(min(t), 3),
             "best_cpu_seconds": round(min(cpu[name]), 3),
             "docs_per_second": round(len(texts) / min(t), 2), "max_abs_difference": difference}
            for name, t in timings.items()]
    write_csv(args.out, rows)
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
