"""MaxSim-mean (NUGGET eq. 10) speed: the batched torch ``maxsim_mean`` beside a per-pair loop and PyLate's scorer.

Random vectors shaped like the PI evaluation (a query scored against its own 20 candidates, d = 384), at two
set sizes (``--shapes``):

- ``tokens``: 200-256 vectors per document (every token state: the ColBART row);
- ``nuggets``: 20-26 vectors per document (NUGGET at ratio 0.1 of ~256 tokens).

Implementations, all on the same inputs and the same ``--threads`` (torch and numpy's BLAS both limited
with threadpoolctl, so the loop cannot win or lose by oversubscribing a shared machine):

- per-pair loop (numpy): one (query, candidate) pair at a time, normalise, one matrix product, max, mean;
- ours: ``multivec.metrics.maxsim.maxsim_mean`` on padded, masked batches of ``--batch-size`` queries x 20
  candidates (padding included in the timing);
- PyLate ``colbert_scores`` (torch path) and ``colbert_kd_scores``: PyLate 1.6 cannot be installed beside the
  pinned stack (pip would replace torch 2.13 with 2.11, transformers 5.23 with 5.3 and sentence-transformers
  6.2 with 5.3), so both are re-stated here as the einsum formulation of its torch path (``pylate/scores/
  colbert.py``; named as such in the CSV): ``einsum("ash,bth->abst")`` (every query x every document; here
  one query against its 20 candidates per call) or ``einsum("ash,abth->abst")`` (each query against its own
  candidates), padding masked by multiplying with 0/1 masks, ``max`` over document tokens, ``sum`` over
  query tokens. Semantics differ from eq. 10: PyLate sums over query tokens (we divide by the query's
  length to compare) and does not normalise (its models emit unit vectors; inputs are normalised first
  here, outside the timing); a padded document position scores 0 instead of -inf, so it wins the max
  when every real cosine of a query token is negative (never with these inputs; the CSV reports the
  largest difference).

Timing: ``--repeats`` rounds, the implementations alternated within each round; the ratio is the median
over rounds. Every result must agree with the loop to 1e-5, or the script stops.

    python benchmarks/maxsim_speed.py [--n-queries 64] [--shapes tokens,nuggets] [--threads 1] [--repeats 3]
        [--out results/benchmarks/maxsim_speed.csv]   (and a .png)
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import cpu_name, interleaved  # noqa: E402

from multivec.io import write_csv  # noqa: E402
from multivec.metrics.maxsim import maxsim_mean, pad_vector_sets  # noqa: E402

SHAPES = {"tokens": (200, 257), "nuggets": (20, 27)}


def loop_maxsim_mean(query: np.ndarray, doc: np.ndarray) -> float:
    q = query / np.linalg.norm(query, axis=1, keepdims=True)
    d = doc / np.linalg.norm(doc, axis=1, keepdims=True)
    return float((q @ d.T).max(axis=1).mean())


def pylate_colbert_scores(queries, documents, queries_mask=None, documents_mask=None) -> torch.Tensor:
    """PyLate's ``colbert_scores`` torch path, re-stated (every query x every document; sum over query tokens)."""
    scores = torch.einsum("ash,bth->abst", queries, documents)
    if queries_mask is not None:
        scores = scores * queries_mask.unsqueeze(1).unsqueeze(3)
    if documents_mask is not None:
        scores = scores * documents_mask.unsqueeze(0).unsqueeze(2)
    return scores.max(axis=-1).values.sum(axis=-1)


def pylate_colbert_kd_scores(queries, documents, queries_mask=None, documents_mask=None) -> torch.Tensor:
    """PyLate's ``colbert_kd_scores`` torch path, re-stated (each query x its own documents (B, C, J, d))."""
    scores = torch.einsum("ash,abth->abst", queries, documents)
    if queries_mask is not None:
        scores = scores * queries_mask.unsqueeze(1).unsqueeze(3)
    if documents_mask is not None:
        scores = scores * documents_mask.unsqueeze(2)
    return scores.max(axis=-1).values.sum(axis=-1)


def make_inputs(n_queries: int, n_candidates: int, dim: int, lengths: tuple[int, int], seed: int = 0):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(*lengths, size=n_queries * (1 + n_candidates))
    sets = [rng.normal(size=(n, dim)).astype(np.float32) for n in sizes]
    queries = sets[:n_queries]
    candidates = [sets[n_queries + i * n_candidates: n_queries + (i + 1) * n_candidates] for i in range(n_queries)]
    return queries, candidates


def run_loop(queries, candidates) -> np.ndarray:
    return np.array([[loop_maxsim_mean(q, d) for d in cands] for q, cands in zip(queries, candidates)])


def run_ours(queries, candidates, batch_size: int) -> np.ndarray:
    """Each batch of queries and their candidates padded (to the batch's longest set) and scored in one call."""
    n, c = len(queries), len(candidates[0])
    out = np.empty((n, c))
    with torch.inference_mode():
        for s in range(0, n, batch_size):
            e = min(s + batch_size, n)
            q_pad, q_mask = pad_vector_sets(queries[s:e])
            d_pad, d_mask = pad_vector_sets([d for cands in candidates[s:e] for d in cands])
            out[s:e] = maxsim_mean(q_pad[:, None], q_mask[:, None], d_pad.view(e - s, c, *d_pad.shape[1:]),
                                   d_mask.view(e - s, c, -1)).numpy()
    return out


def unit_sets(sets):
    return [v / np.linalg.norm(v, axis=1, keepdims=True) for v in sets]


def run_pylate_per_query(unit_queries, unit_candidates) -> np.ndarray:
    """colbert_scores called once per query against its candidates, then / query length (eq. 10's mean)."""
    out = np.empty((len(unit_queries), len(unit_candidates[0])))
    with torch.inference_mode():
        for i, (q, cands) in enumerate(zip(unit_queries, unit_candidates)):
            d_pad, d_mask = pad_vector_sets(cands)
            scores = pylate_colbert_scores(torch.from_numpy(q)[None], d_pad, None, d_mask.float())
            out[i] = scores[0].numpy() / len(q)
    return out


def run_pylate_kd(unit_queries, unit_candidates, batch_size: int) -> np.ndarray:
    n, c = len(unit_queries), len(unit_candidates[0])
    q_pad, q_mask = pad_vector_sets(unit_queries)
    d_pad, d_mask = pad_vector_sets([d for cands in unit_candidates for d in cands])
    d_pad, d_mask = d_pad.view(n, c, *d_pad.shape[1:]), d_mask.view(n, c, -1)
    out = np.empty((n, c))
    with torch.inference_mode():
        for s in range(0, n, batch_size):
            e = s + batch_size
            scores = pylate_colbert_kd_scores(q_pad[s:e], d_pad[s:e], q_mask[s:e].float(), d_mask[s:e].float())
            out[s:e] = (scores / q_mask[s:e].sum(dim=-1, keepdim=True)).numpy()
    return out


def compare(shape: str, n_queries: int, n_candidates: int, dim: int, batch_size: int, threads: int,
            repeats: int) -> list[dict]:
    """Rows for one shape: every implementation's median seconds and ratio to the loop and to ours."""
    from threadpoolctl import threadpool_limits

    queries, candidates = make_inputs(n_queries, n_candidates, dim, SHAPES[shape])
    unit_queries = unit_sets(queries)
    unit_candidates = [unit_sets(c) for c in candidates]
    results = {}

    def keep(name, run):
        def timed():
            results[name] = run()
        return timed

    runs = {
        "per-pair loop (numpy)": keep("per-pair loop (numpy)", lambda: run_loop(queries, candidates)),
        "multivec maxsim_mean (batched torch)": keep("multivec maxsim_mean (batched torch)",
                                                     lambda: run_ours(queries, candidates, batch_size)),
        "PyLate colbert_scores einsum, re-stated (per query)": keep(
            "PyLate colbert_scores einsum, re-stated (per query)",
            lambda: run_pylate_per_query(unit_queries, unit_candidates)),
        "PyLate colbert_kd_scores einsum, re-stated (batched)": keep(
            "PyLate colbert_kd_scores einsum, re-stated (batched)",
            lambda: run_pylate_kd(unit_queries, unit_candidates, batch_size)),
    }
    torch.set_num_threads(threads)
    with threadpool_limits(limits=threads):
        seconds, loads = interleaved(runs, repeats, warmup=True)
    reference = results["per-pair loop (numpy)"]
    loop, ours = seconds["per-pair loop (numpy)"], seconds["multivec maxsim_mean (batched torch)"]
    rows = []
    for name, timed in seconds.items():
        difference = float(np.abs(results[name] - reference).max())
        if difference > 1e-5:
            raise SystemExit(f"{shape}: {name} differs from the per-pair loop by {difference}: the comparison is void")
        pairs = n_queries * n_candidates
        rows.append({"shape": shape, "vectors_per_document": f"{SHAPES[shape][0]}-{SHAPES[shape][1] - 1}",
                     "dim": dim, "pairs": pairs, "threads": threads, "batch_size": batch_size,
                     "implementation": name, "repeats": repeats, "seconds_median": statistics.median(timed),
                     "pairs_per_second": pairs / statistics.median(timed),
                     "speedup_over_loop": statistics.median(a / t for a, t in zip(loop, timed)),
                     "ours_speedup_over_this": statistics.median(t / o for t, o in zip(timed, ours)),
                     "max_abs_difference_to_loop": difference, "cpu": cpu_name(),
                     "load_average_min": min(loads), "load_average_max": max(loads)})
    return rows


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shapes = list(dict.fromkeys(r["shape"] for r in rows))
    fig, axes = plt.subplots(len(shapes), 1, figsize=(7.5, 1.2 + 1.6 * len(shapes)), squeeze=False)
    for ax, shape in zip(axes[:, 0], shapes):
        sub = [r for r in rows if r["shape"] == shape][::-1]
        bars = ax.barh([r["implementation"] for r in sub], [r["speedup_over_loop"] for r in sub], color="#4c72b0")
        for bar, r in zip(bars, sub):
            ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f" {r['speedup_over_loop']:.1f}x",
                    va="center", fontsize=7)
        ax.axvline(20, color="grey", ls=":", lw=1)
        ax.set_xlim(0, max(max(r["speedup_over_loop"] for r in sub), 20) * 1.25)
        ax.tick_params(axis="y", labelsize=7)
        ax.set_title(f"{shape} ({sub[0]['vectors_per_document']} vectors/doc, {sub[0]['pairs']} pairs, "
                     f"{sub[0]['threads']} thread, load {sub[0]['load_average_min']:.1f}-"
                     f"{sub[0]['load_average_max']:.1f})", fontsize=8)
    axes[-1, 0].set_xlabel("speed-up over the per-pair loop (median of alternated repeats; dotted: 20x)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-queries", type=int, default=64)
    parser.add_argument("--n-candidates", type=int, default=20)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--shapes", default="tokens,nuggets")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default="results/benchmarks/maxsim_speed.csv")
    args = parser.parse_args()
    rows = []
    for shape in args.shapes.split(","):
        if shape not in SHAPES:
            parser.error(f"unknown shape {shape!r} ({', '.join(SHAPES)})")
        rows.extend(compare(shape, args.n_queries, args.n_candidates, args.dim, args.batch_size, args.threads,
                            args.repeats))
    out = Path(args.out)
    write_csv(out, rows)
    plot(rows, out.with_suffix(".png"))
    for r in rows:
        print(f"{r['shape']:8s} {r['implementation']:54s} {r['seconds_median']:.3f}s  "
              f"{r['speedup_over_loop']:5.1f}x the loop  ours {r['ours_speedup_over_this']:.2f}x this  "
              f"max|diff| {r['max_abs_difference_to_loop']:.1e}")
    print(f"load average {min(r['load_average_min'] for r in rows):.1f}-{max(r['load_average_max'] for r in rows):.1f}"
          f" on {rows[0]['cpu']}; wrote {out} and {out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
