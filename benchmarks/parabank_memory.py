"""ParaBank PI builder memory: peak RSS of a streamed build stays flat as the file grows.

NUGGET Appendix A builds the paraphrase-identification documents from ParaBank v1.0 (about
9 GB) and picks each query's BM25 negatives from a 1024-document window because the corpus
is too large to index whole. ``build_paraphrase_identification_task_from_file`` streams the
file twice and indexes one block span (at most two windows) at a time. This benchmark writes
synthetic files in ParaBank's layout (``reference<TAB>paraphrase[<TAB>paraphrase]``, as
``tests/fixtures/make_parabank_sample.py``; lines drawn from a pool of 50,000 generated ones) of
1M and 5M lines to a temporary folder, builds the PI task from each in a fresh subprocess,
reports that process's peak RSS (``resource.getrusage``), and deletes the files. For
contrast, ``--in-memory-lines`` also measures the old way (the whole file read into a list
first) at the smallest size.

    python benchmarks/parabank_memory.py [--lines 1000000 5000000] [--n-queries 64]
        [--out results/benchmarks/parabank_memory.csv]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from multivec.io import write_csv

VOCABULARY = 20000
POOL = 50_000  # distinct sentence lines; documents of ~15 random picks practically never repeat
CHUNK = 500_000


def sentence_pool(rng: np.random.Generator) -> list[str]:
    """``POOL`` ParaBank-shaped lines: 4-30 word references from a Zipf-like vocabulary; the
    paraphrase swaps about a fifth of the words; every fifth line has a second paraphrase."""
    words = [f"w{i}" for i in range(VOCABULARY)]
    lines = []
    for k in range(POOL):
        length = int(rng.integers(4, 31))
        ids = np.minimum(rng.zipf(1.3, size=length) - 1, VOCABULARY - 1).tolist()
        reference = [words[i] for i in ids]
        paraphrase = [words[int(rng.integers(VOCABULARY))] if rng.random() < 0.2 else w for w in reference]
        fields = [" ".join(reference) + " .", " ".join(paraphrase) + " ."]
        if k % 5 == 0:
            fields.append(" ".join(paraphrase[::-1]) + " .")
        lines.append("\t".join(fields))
    return lines


def write_parabank_like(path: Path, n_lines: int, seed: int = 0) -> None:
    """``n_lines`` lines drawn (seeded, with replacement) from ``sentence_pool``."""
    rng = np.random.default_rng(seed)
    pool = sentence_pool(rng)
    with open(path, "w", encoding="utf-8") as handle:
        for start in range(0, n_lines, CHUNK):
            picks = rng.integers(0, POOL, size=min(CHUNK, n_lines - start)).tolist()
            handle.write("\n".join(pool[i] for i in picks) + "\n")


CHILD = r"""
import json, resource, sys, time
from dataclasses import asdict
from multivec.tasks.paraphrase_identification import (ParabankCounts, build_paraphrase_identification_task,
                                                      build_paraphrase_identification_task_from_file, read_parabank)
path, mode, n_queries = sys.argv[1], sys.argv[2], int(sys.argv[3])
start = time.perf_counter()
counts = ParabankCounts()
if mode == "streamed":
    task = build_paraphrase_identification_task_from_file(path, counts=counts, n_queries=n_queries, seed=0,
                                                          show_progress=False)
else:  # the old way: every sentence pair in memory first
    task = build_paraphrase_identification_task(read_parabank(path), n_queries=n_queries, seed=0,
                                                show_progress=False)
peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # Linux: kilobytes
print(json.dumps({"seconds": round(time.perf_counter() - start, 1), "peak_rss_mb": round(peak_kb / 1024, 1),
                  "queries": task.n_queries, "documents_built": counts.documents or None,
                  "max_documents_held": counts.max_documents_held or None}))
"""


def measure(path: Path, mode: str, n_queries: int) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, "-c", CHILD, str(path), mode, str(n_queries)], capture_output=True,
                            text=True, env=env)
    if result.returncode != 0:
        raise RuntimeError(f"{mode} build of {path} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[1_000_000, 5_000_000])
    parser.add_argument("--n-queries", type=int, default=64,
                        help="queries per build (memory does not depend on it; time does)")
    parser.add_argument("--in-memory-lines", type=int, default=1_000_000,
                        help="also measure the whole-file-in-memory build at this size (0: skip)")
    parser.add_argument("--tmp", default=None, help="folder for the generated files (default: system temp)")
    parser.add_argument("--out", default="results/benchmarks/parabank_memory.csv")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(dir=args.tmp, prefix="parabank_memory_") as folder:
        for n_lines in args.lines:
            path = Path(folder) / f"parabank_{n_lines}.tsv"
            start = time.perf_counter()
            write_parabank_like(path, n_lines)
            size_mb = path.stat().st_size / 2**20
            print(f"{n_lines} lines: {size_mb:.0f} MB written in {time.perf_counter() - start:.0f} s", flush=True)
            modes = ["streamed"] + (["in_memory"] if n_lines == args.in_memory_lines else [])
            for mode in modes:
                row = {"lines": n_lines, "file_mb": round(size_mb, 1), "mode": mode, "n_queries": args.n_queries,
                       **measure(path, mode, args.n_queries)}
                print(row, flush=True)
                rows.append(row)
            path.unlink()
    write_csv(args.out, rows)
    streamed = [r["peak_rss_mb"] for r in rows if r["mode"] == "streamed"]
    print(f"wrote {args.out}; streamed peak RSS {min(streamed):.0f}-{max(streamed):.0f} MB "
          f"over {min(args.lines):,}-{max(args.lines):,} lines")


if __name__ == "__main__":
    main()
