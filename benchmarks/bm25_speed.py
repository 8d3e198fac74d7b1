"""BM25 speed: our sparse-matrix BM25Index against rank-bm25's BM25Okapi, on the same corpus.

Corpus: the paraphrase documents (``R*``) of the released PI dev set; queries: its reference
documents (``L*``), as the PI builder uses them. Both produce the same scores (checked here
to 1e-6); the CSV records build and scoring time and the speed ratio.

    python benchmarks/bm25_speed.py [--mirror DIR] [--n-queries 100] [--out results/benchmarks/bm25_speed.csv]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from rank_bm25 import BM25Okapi

from multivec.io import read_docs_tsv, write_csv
from multivec.retrieval.bm25 import BM25Index, tokenize


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", default=os.environ.get("MULTIVEC_DATA_MIRROR"),
                        help="data mirror folder (default $MULTIVEC_DATA_MIRROR)")
    parser.add_argument("--n-queries", type=int, default=100)
    parser.add_argument("--out", default="results/benchmarks/bm25_speed.csv")
    args = parser.parse_args()
    if not args.mirror:
        parser.error("give --mirror or set MULTIVEC_DATA_MIRROR")
    docs = read_docs_tsv(Path(args.mirror) / "nugget-data/paraphrase_identification/dev/docs.txt", on_empty="skip")
    corpus = [text for doc_id, text in docs.items() if doc_id.startswith("R")]
    queries = [text for doc_id, text in docs.items() if doc_id.startswith("L")][: args.n_queries]

    start = time.perf_counter()
    corpus_tokens = [tokenize(d) for d in corpus]
    reference = BM25Okapi(corpus_tokens)
    reference_build = time.perf_counter() - start
    start = time.perf_counter()
    expected = np.array([reference.get_scores(tokenize(q)) for q in queries])
    reference_score = time.perf_counter() - start

    start = time.perf_counter()
    index = BM25Index(corpus, show_progress=False)
    ours_build = time.perf_counter() - start
    start = time.perf_counter()
    ours = index.score(queries, show_progress=False)
    ours_score = time.perf_counter() - start

    max_difference = float(np.abs(ours - expected).max())
    if max_difference > 1e-6:
        raise SystemExit(f"scores differ by {max_difference}: the comparison is void")
    rows = [
        {"implementation": "rank-bm25 BM25Okapi", "n_documents": len(corpus), "n_queries": len(queries),
         "build_seconds": reference_build, "score_seconds": reference_score,
         "queries_per_second": len(queries) / reference_score, "speedup_scoring": 1.0},
        {"implementation": "multivec BM25Index (scipy.sparse)", "n_documents": len(corpus), "n_queries": len(queries),
         "build_seconds": ours_build, "score_seconds": ours_score,
         "queries_per_second": len(queries) / ours_score, "speedup_scoring": reference_score / ours_score},
    ]
    out = Path(args.out)
    write_csv(out, rows)
    for row in rows:
        print(f"{row['implementation']:36s} build {row['build_seconds']:.3f}s  score {row['score_seconds']:.3f}s  "
              f"{row['queries_per_second']:.1f} q/s")
    print(f"scoring speed-up {reference_score / ours_score:.0f}x; max |score difference| {max_difference:.2e}; "
          f"wrote {out}")


if __name__ == "__main__":
    main()
