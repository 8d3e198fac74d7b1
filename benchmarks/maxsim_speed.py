"""MaxSim-mean (NUGGET eq. 10) speed: the batched torch implementation against a per-pair loop.

Random vectors shaped like the PI evaluation with token states: queries of ~256 vectors,
20 candidates each, d = 384. The loop scores one (query, candidate) pair at a time with
numpy (itself vectorised inside the pair); the batched version scores a batch of queries
against all their candidates in one broadcast matrix product. Results agree to 1e-5.

    python benchmarks/maxsim_speed.py [--n-queries 64] [--threads 1] [--out results/benchmarks/maxsim_speed.csv]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from multivec.io import write_csv
from multivec.metrics.maxsim import maxsim_mean, pad_vector_sets


def loop_maxsim_mean(query: np.ndarray, doc: np.ndarray) -> float:
    q = query / np.linalg.norm(query, axis=1, keepdims=True)
    d = doc / np.linalg.norm(doc, axis=1, keepdims=True)
    return float((q @ d.T).max(axis=1).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-queries", type=int, default=64)
    parser.add_argument("--n-candidates", type=int, default=20)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--out", default="results/benchmarks/maxsim_speed.csv")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    lengths = rng.integers(200, 257, size=args.n_queries * (1 + args.n_candidates))
    sets = [rng.normal(size=(n, args.dim)).astype(np.float32) for n in lengths]
    queries = sets[: args.n_queries]
    candidates = [sets[args.n_queries + i * args.n_candidates: args.n_queries + (i + 1) * args.n_candidates]
                  for i in range(args.n_queries)]

    start = time.perf_counter()
    looped = np.array([[loop_maxsim_mean(q, d) for d in cands] for q, cands in zip(queries, candidates)])
    loop_seconds = time.perf_counter() - start

    start = time.perf_counter()
    q_pad, q_mask = pad_vector_sets(queries)
    d_pad, d_mask = pad_vector_sets([d for cands in candidates for d in cands])
    d_pad = d_pad.view(args.n_queries, args.n_candidates, *d_pad.shape[1:])
    d_mask = d_mask.view(args.n_queries, args.n_candidates, -1)
    batched = np.empty_like(looped)
    with torch.inference_mode():
        for s in range(0, args.n_queries, args.batch_size):
            e = s + args.batch_size
            batched[s:e] = maxsim_mean(q_pad[s:e, None], q_mask[s:e, None], d_pad[s:e], d_mask[s:e]).numpy()
    batched_seconds = time.perf_counter() - start

    max_difference = float(np.abs(batched - looped).max())
    if max_difference > 1e-5:
        raise SystemExit(f"results differ by {max_difference}: the comparison is void")
    pairs = args.n_queries * args.n_candidates
    rows = [
        {"implementation": "per-pair loop (numpy)", "pairs": pairs, "threads": args.threads,
         "seconds": loop_seconds, "pairs_per_second": pairs / loop_seconds, "speedup": 1.0},
        {"implementation": "batched maxsim_mean (torch)", "pairs": pairs, "threads": args.threads,
         "seconds": batched_seconds, "pairs_per_second": pairs / batched_seconds,
         "speedup": loop_seconds / batched_seconds},
    ]
    out = Path(args.out)
    write_csv(out, rows)
    for row in rows:
        print(f"{row['implementation']:30s} {row['seconds']:.3f}s  {row['pairs_per_second']:.0f} pairs/s")
    print(f"speed-up {loop_seconds / batched_seconds:.1f}x; max |difference| {max_difference:.1e}; wrote {out}")


if __name__ == "__main__":
    main()
