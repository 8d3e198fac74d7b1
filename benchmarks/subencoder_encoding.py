"""Proposition encoding speed of the sub-sentence encoder (Chen et al. 2023 §3.1): each sentence forwarded
once for all of its proposition masks (``SubEncoder.encode``) against one forward per proposition (the
same call with one proposition at a time). Real PropSegment dev sentences and their reference
propositions; the vectors of the two ways agree to 1e-4.

    python benchmarks/subencoder_encoding.py [--encoder minilm] [--sentences 120] [--threads 1]
        [--out results/benchmarks/subencoder_encoding.csv]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import torch

from multivec.io import write_csv
from multivec.io.resources import data_mirror
from multivec.subencoder.configuration import SubEncoderConfig
from multivec.subencoder.model import SubEncoder
from multivec.subencoder.evaluation.retrieval_set import build_retrieval_set


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encoder", default="minilm")
    parser.add_argument("--sentences", type=int, default=120)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--propsegment", default=None, help="propsegment/v1 folder (default: <mirror>/propsegment/v1)")
    parser.add_argument("--out", default="results/benchmarks/subencoder_encoding.csv")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    folder = Path(args.propsegment) if args.propsegment else data_mirror() / "propsegment" / "v1"
    rs = build_retrieval_set(folder)
    keys = list(dict.fromkeys(c.sentence_key for c in rs.candidates))[:args.sentences]
    chosen = set(keys)
    spans = {k: [] for k in keys}
    for cand in rs.candidates:
        if cand.sentence_key in chosen:
            spans[cand.sentence_key].append(rs.char_spans(cand))
    texts = [rs.sentences[k] for k in keys]
    model = SubEncoder.from_backbone(SubEncoderConfig(encoder=args.encoder))
    encoded, masks = model.span_masks(texts, [spans[k] for k in keys], max_tokens=model.position_limit)
    n_props = sum(map(len, masks))
    model.encode(texts[:4], masks[:4])  # warm-up

    started = time.perf_counter()
    once = model.encode(texts, masks, batch_size=args.batch_size, input_ids=encoded["input_ids"])
    once_s = time.perf_counter() - started

    # one forward per proposition: each (sentence, one mask) is its own input row, batched the same way
    flat_texts = [t for t, m in zip(texts, masks) for _ in m]
    flat_ids = [ids for ids, m in zip(encoded["input_ids"], masks) for _ in m]
    flat_masks = [[mask] for m in masks for mask in m]
    started = time.perf_counter()
    separate = model.encode(flat_texts, flat_masks, batch_size=args.batch_size, input_ids=flat_ids)
    separate_s = time.perf_counter() - started
    difference = float((once - separate).abs().max())
    if difference > 1e-4:
        raise AssertionError(f"the two encodings differ by {difference}")
    rows = [{"method": "one forward per sentence", "sentences": len(texts), "propositions": n_props,
             "seconds": round(once_s, 3), "propositions_per_s": round(n_props / once_s, 1)},
            {"method": "one forward per proposition", "sentences": len(texts), "propositions": n_props,
             "seconds": round(separate_s, 3), "propositions_per_s": round(n_props / separate_s, 1)}]
    for row in rows:
        row.update(encoder=args.encoder, threads=args.threads, batch_size=args.batch_size,
                   speedup=round(separate_s / once_s, 2), max_abs_difference=f"{difference:.1e}")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    write_csv(args.out, rows)
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
