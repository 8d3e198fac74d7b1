"""BM25 speed, agreement and memory at scale: our BM25Index beside bm25s and rank-bm25's BM25Okapi.

Two corpora, both tokenised once (``multivec.retrieval.bm25.tokenize``) and handed to every implementation
as the same token lists, so only indexing and scoring are compared:

- ``synthetic``: ``--n-passages`` (default 200,000) passages over a seeded Zipfian vocabulary
  (``--vocab-size`` 50,000 words, exponent ``--zipf`` 1.1; lengths 10 + Poisson(``--mean-length`` - 10),
  about 60 tokens): the mirror's public text is ~1.5M words, too little for 200,000 real passages;
- ``mirror``: the real public text of the data mirror (both PI splits' docs.txt and WikiText-2 valid/test)
  cut into passages of ``--passage-tokens`` (60) tokens: ~24,000 passages.

Queries: windows of 4-12 consecutive tokens from random passages (seeded). For each corpus:

- exactness: our top-``k`` (indices and scores) must equal rank-bm25's ``get_scores`` ranking on
  ``--n-reference-queries`` queries (rank-bm25 loops over every document in Python, so at 200,000
  passages it is timed on that subset only), or the script stops;
- speed: ``BM25Index.top_k`` and bm25s' ``retrieve`` (numpy backend; numba backend when numba is
  installed, after a warm-up that compiles it) on all ``--n-queries`` queries, alternated ``--repeats``
  times; the ratio is the median over repeats. bm25s' default method (``lucene``) is timed;
- agreement: bm25s with method robertson / atire / lucene, top-``k`` overlap with rank-bm25's (ours);
- memory (tracemalloc peak, a separate untimed pass): index build, and scoring ``--n-queries`` vs 4x as
  many queries: it should not grow with queries x documents.

    python benchmarks/bm25_speed.py [--mirror DIR] [--n-passages 200000] [--n-queries 1000] [--k 10]
        [--repeats 3] [--corpora synthetic,mirror] [--out results/benchmarks/bm25_speed.csv]  (and a .png)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import cpu_name, interleaved, load_average  # noqa: E402

from multivec.io import read_docs_tsv, write_csv  # noqa: E402
from multivec.retrieval.bm25 import BM25Index, tokenize  # noqa: E402

BM25S_METHODS = ("robertson", "atire", "lucene")


def synthetic_corpus(n_passages: int, vocab_size: int = 50_000, zipf: float = 1.1, mean_length: int = 60,
                     seed: int = 0) -> list[list[str]]:
    """Seeded passages of Zipf-distributed words ``w<rank>``; lengths 10 + Poisson(mean_length - 10)."""
    rng = np.random.default_rng(seed)
    probabilities = 1.0 / np.arange(1, vocab_size + 1) ** zipf
    probabilities /= probabilities.sum()
    lengths = 10 + rng.poisson(max(mean_length - 10, 0), size=n_passages)
    ids = rng.choice(vocab_size, size=int(lengths.sum()), p=probabilities)
    words = np.array([f"w{i}" for i in range(vocab_size)], dtype=object)
    return [chunk.tolist() for chunk in np.split(words[ids], np.cumsum(lengths)[:-1])]


def mirror_passages(mirror: Path, passage_tokens: int = 60) -> list[list[str]]:
    """The mirror's public text (PI dev+train docs.txt, WikiText-2 valid+test) as passages of ``passage_tokens``."""
    texts = []
    for split in ("dev", "train"):
        path = mirror / f"nugget-data/paraphrase_identification/{split}/docs.txt"
        if not path.is_file():
            raise SystemExit(f"missing {path}: the mirror corpus needs the released PI docs (set --mirror)")
        texts.extend(read_docs_tsv(path, on_empty="skip").values())
    for split in ("valid", "test"):
        path = mirror / f"wikitext-2/{split}.txt"
        if not path.is_file():
            raise SystemExit(f"missing {path}: the mirror corpus needs WikiText-2 (set --mirror)")
        texts.extend(path.read_text(encoding="utf-8").splitlines())
    passages = []
    for text in texts:
        tokens = tokenize(text)
        passages.extend(tokens[i:i + passage_tokens] for i in range(0, len(tokens), passage_tokens))
    return [p for p in passages if len(p) >= passage_tokens // 4]


def sample_queries(passages: Sequence[Sequence[str]], n_queries: int, seed: int = 1) -> list[list[str]]:
    """Windows of 4-12 consecutive tokens from random passages."""
    rng = np.random.default_rng(seed)
    queries = []
    for p in rng.integers(len(passages), size=n_queries):
        passage = passages[p]
        length = int(min(rng.integers(4, 13), len(passage)))
        start = int(rng.integers(0, len(passage) - length + 1))
        queries.append(list(passage[start:start + length]))
    return queries


def bm25s_retriever(passages, method: str = "lucene", backend: str = "numpy"):
    import bm25s

    retriever = bm25s.BM25(method=method, backend=backend)
    retriever.index(passages, show_progress=False)
    return retriever


def bm25s_top_k(retriever, queries, k: int) -> np.ndarray:
    documents, _ = retriever.retrieve(queries, k=k, show_progress=False, n_threads=1 if retriever.backend == "numba"
                                      else 0)
    return np.asarray(documents)


def overlap(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(mean share of top-k in common, share of queries with the identical ranked list)."""
    shared = [len(set(x) & set(y)) / len(x) for x, y in zip(a.tolist(), b.tolist())]
    same = [list(x) == list(y) for x, y in zip(a.tolist(), b.tolist())]
    return float(np.mean(shared)), float(np.mean(same))


def check_against_rank_bm25(index: BM25Index, passages, queries, k: int) -> dict:
    """rank-bm25's BM25Okapi on ``queries``: build and per-query time, and our top-k against its ranking.
    Stops the script if a ranking or a score disagrees."""
    from rank_bm25 import BM25Okapi

    start = time.perf_counter()
    reference = BM25Okapi(passages)
    build = time.perf_counter() - start
    start = time.perf_counter()
    expected = [reference.get_scores(q) for q in queries]
    score = time.perf_counter() - start
    ours_indices, ours_scores = index.top_k(queries, k, show_progress=False)
    worst = 0.0
    for row, scores in enumerate(expected):
        ranking = np.argsort(-scores, kind="stable")[:k]
        difference = float(np.abs(ours_scores[row] - scores[ours_indices[row]]).max())
        worst = max(worst, difference)
        # a tie at the k-th place may order differently only if the scores are equal to rounding
        if list(ranking) != list(ours_indices[row]) and not np.allclose(scores[ranking], ours_scores[row], atol=1e-9):
            raise SystemExit(f"query {row}: our top-{k} differs from rank-bm25's ({list(ours_indices[row])} vs "
                             f"{list(ranking)}): the comparison is void")
    if worst > 1e-6:
        raise SystemExit(f"our scores differ from rank-bm25's by {worst}: the comparison is void")
    return {"build_seconds": build, "score_seconds": score, "max_abs_score_difference": worst}


def traced_peak_mb(run: Callable[[], object]) -> tuple[float, object]:
    """tracemalloc peak (MB) of the allocations ``run`` makes (numpy and scipy buffers included)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    result = run()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20, result


def index_mb(index: BM25Index) -> float:
    w = index.weights
    return (w.data.nbytes + w.indices.nbytes + w.indptr.nbytes + index.idf.nbytes) / 2**20


def bm25s_index_mb(retriever) -> float:
    return sum(v.nbytes for v in retriever.scores.values() if isinstance(v, np.ndarray)) / 2**20


def have_numba() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def compare(corpus: str, passages: list[list[str]], queries: list[list[str]], k: int, repeats: int,
            n_reference: int, measure_memory: bool = True, numba: bool | None = None) -> list[dict]:
    """Every row of one corpus: ours, bm25s (timed and per method), rank-bm25 on a subset."""
    numba = have_numba() if numba is None else numba
    n_tokens = sum(len(p) for p in passages)
    common = {"corpus": corpus, "n_passages": len(passages), "n_tokens": n_tokens, "k": k, "cpu": cpu_name()}

    # builds, alternated (ours first on even repeats)
    build_runs = {"ours": lambda: BM25Index(passages, show_progress=False),
                  "bm25s": lambda: bm25s_retriever(passages, "lucene", "numpy")}
    build_load = load_average()
    build_seconds, _ = interleaved(build_runs, 1)
    index = BM25Index(passages, show_progress=False)
    reference = check_against_rank_bm25(index, passages, queries[:n_reference], k)

    retrievers = {("lucene", "numpy"): bm25s_retriever(passages, "lucene", "numpy")}
    if numba:
        retrievers[("lucene", "numba")] = bm25s_retriever(passages, "lucene", "numba")
        bm25s_top_k(retrievers[("lucene", "numba")], queries[:2], k)  # compile outside the timing
    runs = {"ours": lambda: index.top_k(queries, k, show_progress=False)}
    for (method, backend), retriever in retrievers.items():
        runs[f"bm25s {method} ({backend})"] = (lambda r=retriever: bm25s_top_k(r, queries, k))
    seconds, loads = interleaved(runs, repeats)

    ours_top = index.top_k(queries, k, show_progress=False)[0]
    agreement = {}
    for method in BM25S_METHODS:
        retriever = retrievers.get((method, "numpy")) or bm25s_retriever(passages, method, "numpy")
        agreement[method] = overlap(ours_top, bm25s_top_k(retriever, queries, k))

    memory = {}
    if measure_memory:
        memory["ours build"], _ = traced_peak_mb(lambda: BM25Index(passages, show_progress=False))
        memory["bm25s build"], _ = traced_peak_mb(lambda: bm25s_retriever(passages, "lucene", "numpy"))
        many = queries * 4
        for label, qs in (("", queries), (" x4", many)):
            memory["ours score" + label], _ = traced_peak_mb(lambda: index.top_k(qs, k, show_progress=False))
            memory["bm25s score" + label], _ = traced_peak_mb(
                lambda: bm25s_top_k(retrievers[("lucene", "numpy")], qs, k))

    def row(name: str, timed: list[float] | None, **extra) -> dict:
        median = statistics.median(timed) if timed else float("nan")
        ratio = statistics.median(t / o for t, o in zip(timed, seconds["ours"])) if timed else float("nan")
        return {**common, "implementation": name, "n_queries": len(queries), "repeats": len(timed or []),
                "score_seconds_median": median, "queries_per_second": len(queries) / median if timed else float("nan"),
                "ours_speedup_over_this": ratio, **extra,
                "load_average_min": min(loads), "load_average_max": max(loads), "build_load_average": build_load}

    empty_memory = {"index_mb": float("nan"), "peak_build_mb": float("nan"), "peak_score_mb": float("nan"),
                    "peak_score_mb_4x_queries": float("nan")}
    rows = [row("multivec BM25Index (= rank-bm25 BM25Okapi)", seconds["ours"],
                build_seconds=build_seconds["ours"][0], top_k_overlap_with_rank_bm25=1.0,
                identical_top_k_share=1.0,
                max_abs_score_difference_vs_rank_bm25=reference["max_abs_score_difference"],
                **({"index_mb": index_mb(index), "peak_build_mb": memory["ours build"],
                    "peak_score_mb": memory["ours score"], "peak_score_mb_4x_queries": memory["ours score x4"]}
                   if measure_memory else empty_memory))]
    for (method, backend), retriever in retrievers.items():
        name = f"bm25s {method} ({backend})"
        rows.append(row(f"bm25s method={method} backend={backend}", seconds[name],
                        build_seconds=build_seconds["bm25s"][0] if backend == "numpy" else float("nan"),
                        top_k_overlap_with_rank_bm25=agreement[method][0], identical_top_k_share=agreement[method][1],
                        max_abs_score_difference_vs_rank_bm25=float("nan"),
                        **({"index_mb": bm25s_index_mb(retriever), "peak_build_mb": memory["bm25s build"],
                            "peak_score_mb": memory["bm25s score"],
                            "peak_score_mb_4x_queries": memory["bm25s score x4"]}
                           if measure_memory and backend == "numpy" else empty_memory)))
    for method in BM25S_METHODS:
        if (method, "numpy") not in retrievers:
            rows.append(row(f"bm25s method={method} (agreement only)", None, build_seconds=float("nan"),
                            top_k_overlap_with_rank_bm25=agreement[method][0],
                            identical_top_k_share=agreement[method][1],
                            max_abs_score_difference_vs_rank_bm25=float("nan"), **empty_memory))
    per_query = reference["score_seconds"] / n_reference
    ours_per_query = statistics.median(seconds["ours"]) / len(queries)
    rows.append({**common, "implementation": f"rank-bm25 BM25Okapi (first {n_reference} queries only)",
                 "n_queries": n_reference, "repeats": 1, "score_seconds_median": reference["score_seconds"],
                 "queries_per_second": 1 / per_query, "ours_speedup_over_this": per_query / ours_per_query,
                 "build_seconds": reference["build_seconds"], "top_k_overlap_with_rank_bm25": 1.0,
                 "identical_top_k_share": 1.0, "max_abs_score_difference_vs_rank_bm25": 0.0, **empty_memory,
                 "load_average_min": min(loads), "load_average_max": max(loads), "build_load_average": build_load})
    return rows


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    corpora = list(dict.fromkeys(r["corpus"] for r in rows))
    fig, axes = plt.subplots(len(corpora), 1, figsize=(7.5, 1.3 + 0.5 * 4 * len(corpora)), squeeze=False)
    for ax, corpus in zip(axes[:, 0], corpora):
        timed = [r for r in rows if r["corpus"] == corpus and np.isfinite(r["queries_per_second"])]
        names = [r["implementation"] for r in timed][::-1]
        speeds = [r["queries_per_second"] for r in timed][::-1]
        bars = ax.barh(names, speeds, color="#4c72b0")
        for bar, r in zip(bars, timed[::-1]):
            ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2,
                    f" {r['queries_per_second']:.0f} q/s (ours {r['ours_speedup_over_this']:.2f}x)", va="center",
                    fontsize=7)
        ax.set_xscale("log")
        ax.set_xlim(min(speeds) / 2, max(speeds) * 30)
        ax.tick_params(axis="y", labelsize=7)
        ax.set_title(f"{corpus}: {timed[0]['n_passages']:,} passages, top-{timed[0]['k']}, load "
                     f"{timed[0]['load_average_min']:.1f}-{timed[0]['load_average_max']:.1f}", fontsize=8)
    axes[-1, 0].set_xlabel("queries per second, log scale (higher is better)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", default=os.environ.get("MULTIVEC_DATA_MIRROR"),
                        help="data mirror folder (default $MULTIVEC_DATA_MIRROR)")
    parser.add_argument("--corpora", default="synthetic,mirror")
    parser.add_argument("--n-passages", type=int, default=200_000)
    parser.add_argument("--vocab-size", type=int, default=50_000)
    parser.add_argument("--zipf", type=float, default=1.1)
    parser.add_argument("--mean-length", type=int, default=60)
    parser.add_argument("--passage-tokens", type=int, default=60)
    parser.add_argument("--n-queries", type=int, default=1000)
    parser.add_argument("--n-reference-queries", type=int, default=10)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc pass")
    parser.add_argument("--out", default="results/benchmarks/bm25_speed.csv")
    args = parser.parse_args()
    rows = []
    for corpus in args.corpora.split(","):
        if corpus == "synthetic":
            passages = synthetic_corpus(args.n_passages, args.vocab_size, args.zipf, args.mean_length)
        elif corpus == "mirror":
            if not args.mirror:
                parser.error("the mirror corpus needs --mirror or $MULTIVEC_DATA_MIRROR")
            passages = mirror_passages(Path(args.mirror), args.passage_tokens)
        else:
            parser.error(f"unknown corpus {corpus!r} (synthetic, mirror)")
        print(f"{corpus}: {len(passages):,} passages, {sum(map(len, passages)):,} tokens", flush=True)
        queries = sample_queries(passages, args.n_queries)
        rows.extend(compare(corpus, passages, queries, args.k, args.repeats, args.n_reference_queries,
                            measure_memory=not args.no_memory))
    out = Path(args.out)
    write_csv(out, rows)
    plot(rows, out.with_suffix(".png"))
    for r in rows:
        print(f"{r['corpus']:9s} {r['implementation']:46s} {r['queries_per_second']:9.1f} q/s  "
              f"ours {r['ours_speedup_over_this']:6.2f}x  top-{r['k']} overlap {r['top_k_overlap_with_rank_bm25']:.3f}"
              f"  build {r['build_seconds']:.1f}s  peak score MB {r['peak_score_mb']:.0f} "
              f"(4x queries {r['peak_score_mb_4x_queries']:.0f})")
    print(f"load average {rows[0]['load_average_min']:.1f}-{rows[0]['load_average_max']:.1f} on {rows[0]['cpu']}; "
          f"wrote {out} and {out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
