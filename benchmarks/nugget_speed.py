"""Speed of the demo NUGGET configuration on CPU (MiniLM encoder, l=3, small decoder).

Measures training tokens/s at batch 16×128, encoding docs/s at 128 and 256 tokens, and peak RSS,
and compares options: target vocabulary (BPE vs MiniLM's 30k WordPiece), frozen bottom vs a fully
trainable encoder, the frozen bottom under no_grad vs with autograd on, length-sorted batches,
decoder FFN width, torch threads 1 vs 2, and where the step's time goes (`profile`: FLOPs per step, the
matrix products' share of the time and their rate). Each case runs in its own process (clean RSS, threads).

    python benchmarks/nugget_speed.py                      # all cases, a few minutes on 2 cores
    python benchmarks/nugget_speed.py --cases demo vocab30k

Writes results/benchmarks/nugget_speed.csv and prints a table. Text is synthetic (random MiniLM
vocabulary words with punctuation): only lengths matter for speed.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEMO = dict(encoder="minilm", architecture="bert_decoder", ratio=0.1, scorer_layer=3, decoder_layers=2,
            decoder_heads=6, decoder_ffn=1536, target_tokenizer="bpe", target_vocab_size=8000,
            max_source_tokens=128, max_target_tokens=128)
# name: (description, kind, model changes, settings)
CASES = {
    "demo": ("demo: BPE 8k, bottom frozen (l=3) under no_grad, 1 thread", "train", {}, {}),
    "vocab30k": ("target vocab = MiniLM WordPiece (30522)", "train", {"target_tokenizer": "source"}, {}),
    "unfrozen": ("no frozen bottom: l=0 (all 6 layers trained)", "train", {"scorer_layer": 0}, {}),
    "ffn768": ("decoder FFN 768 instead of 1536", "train", {"decoder_ffn": 768}, {}),
    "threads2": ("demo with 2 torch threads", "train", {}, {"threads": 2}),
    "bottom_grad": ("frozen bottom forward: no_grad vs autograd on", "bottom", {}, {}),
    "random_batches": ("12-110 words (<=128 tokens), random batches", "lengths", {}, {"length_sorted": False}),
    "sorted_batches": ("12-110 words (<=128 tokens), length-sorted batches", "lengths", {}, {"length_sorted": True}),
    "profile": ("demo step under torch.profiler: FLOPs, matrix-product share and rate", "profile", {}, {}),
    "encode": ("encoding (inference), batch 32, 1 thread", "encode", {}, {}),
    "encode_2threads": ("encoding (inference), batch 32, 2 threads", "encode", {}, {"threads": 2}),
}
COLUMNS = ["case", "description", "threads", "batch_size", "source_tokens", "target_vocab", "seconds_per_step",
           "tokens_per_s", "docs_per_s_128", "docs_per_s_256", "padding_fraction", "peak_rss_mb", "note"]


def synthetic_texts(count: int, min_words: int, max_words: int, seed: int) -> list[str]:
    import random

    from multivec.io.resources import minilm_path

    vocab = [w for w in Path(minilm_path(), "vocab.txt").read_text().split() if w.isalpha() and len(w) > 2]
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        words = []
        for i in range(rng.randint(min_words, max_words)):
            words.append(rng.choice(vocab))
            if rng.random() < 0.08:
                words[-1] += rng.choice([",", "."])
        texts.append(" ".join(words) + ".")
    return texts


def peak_rss_mb() -> float:
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # KiB on Linux


MATRIX_PRODUCTS = ("aten::mm", "aten::addmm", "aten::bmm")


def profile_steps(model, optimizer, data, batches) -> str:
    """Where a training step's time goes: torch.profiler over the given steps (after the timed ones), FLOPs
    counted by the profiler, and the share and rate of the matrix products. The share bounds what any kernel
    work other than faster matrix products can buy: 1 / share."""
    from torch.profiler import ProfilerActivity, profile

    from multivec.nugget.training import make_batch

    with profile(activities=[ProfilerActivity.CPU], with_flops=True) as profiler:
        for rows in batches:
            loss = model(*make_batch(model, data, rows, None))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    events = profiler.key_averages()
    total_us = sum(e.self_cpu_time_total for e in events)
    products = [e for e in events if e.key in MATRIX_PRODUCTS]
    product_us = sum(e.self_cpu_time_total for e in products)
    product_flops = sum(e.flops or 0 for e in products)
    step_flops = sum(e.flops or 0 for e in events) / len(batches)
    # the optimizer's own span (its kernels included): what a fused optimizer could shorten
    optimizer_us = sum(e.cpu_time_total for e in events if e.key.startswith("Optimizer.step#"))
    return (f"{step_flops / 1e9:.0f} GFLOP per step; matrix products (mm, addmm, bmm) {100 * product_us / total_us:.0f}% "
            f"of the step's time at {product_flops / (product_us / 1e6) / 1e9:.0f} GFLOP/s on one thread, so at "
            f"most {total_us / product_us:.2f}x from everything else; the optimizer step "
            f"{100 * optimizer_us / total_us:.1f}%")


def worker(name: str, steps: int) -> dict:
    import torch

    from multivec.nugget.configuration import NuggetConfig
    from multivec.nugget.modeling import NuggetModel
    from multivec.nugget.target_tokenizer import TargetTokenizer
    from multivec.nugget.training import TokenizedPairs, TrainConfig, epoch_batches, make_batch, parameter_groups
    from multivec.training.engine import make_optimizer

    description, kind, model_changes, settings = CASES[name]
    threads = settings.get("threads", 1)
    torch.set_num_threads(threads)
    config = NuggetConfig(**{**DEMO, **model_changes})
    texts = synthetic_texts(400, 110, 110, seed=0) if kind != "lengths" else synthetic_texts(400, 12, 110, seed=1)
    target_tokenizer = TargetTokenizer.train_bpe(texts, config.target_vocab_size) \
        if config.target_tokenizer == "bpe" else None
    model = NuggetModel.from_backbone(config, target_tokenizer)
    row = {"case": name, "description": description, "threads": threads,
           "target_vocab": model.processor.target_tokenizer.vocab_size, "note": ""}

    def timed(fn, repeats):
        fn()  # warm-up
        start = time.perf_counter()
        for _ in range(repeats):
            fn()
        return (time.perf_counter() - start) / repeats

    if kind in ("train", "lengths", "profile"):
        data = TokenizedPairs(model.processor.tokenize_sources(texts, 128),
                              model.processor.target_tokenizer.encode(texts, 128))
        train_config = TrainConfig(lr=1e-4, lr_scratch=1e-3)
        optimizer = make_optimizer(parameter_groups(model, train_config), train_config)
        model.train()
        batch_size = 16
        if kind in ("train", "profile"):
            batches = [list(range(i * batch_size, (i + 1) * batch_size)) for i in range(steps + 1)]
        else:
            batches = epoch_batches([len(s) for s in data.sources], batch_size, 0, 0, settings["length_sorted"])
            real = sum(len(data.sources[i]) for b in batches for i in b)
            padded = sum(len(b) * max(len(data.sources[i]) for i in b) for b in batches)
            row["padding_fraction"] = round(1 - real / padded, 3)
        tokens, seconds = 0, 0.0
        for index, rows in enumerate(batches[: steps + 1]):
            batch = make_batch(model, data, rows, None)
            start = time.perf_counter()
            loss = model(*batch)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            if index:  # the first step warms up
                seconds += time.perf_counter() - start
                tokens += int(batch[1].sum())
        row.update(batch_size=batch_size, source_tokens="<=128" if kind == "lengths" else 128,
                   seconds_per_step=round(seconds / steps, 3), tokens_per_s=round(tokens / seconds, 1))
        if kind == "profile":
            row["note"] = profile_steps(model, optimizer, data, batches[:steps])
    elif kind == "bottom":
        ids, mask = model.processor.collate_sources(model.processor.tokenize_sources(texts[:16], 128), model.device)
        enc = model.encoder

        def bottom():
            hidden = enc.embed(ids)
            layer_mask = enc.self_attention_mask(hidden, mask)
            for i in range(config.scorer_layer):
                hidden = enc.run_layer(i, hidden, layer_mask)
            return hidden

        def without_grad():
            with torch.no_grad():
                bottom()

        model.train()
        off, on = timed(without_grad, steps), timed(bottom, steps)
        row.update(batch_size=16, source_tokens=128, seconds_per_step=round(off, 3),
                   note=f"no_grad {off:.3f} s vs autograd on {on:.3f} s per 16x128 forward of layers 1-3 "
                        "(frozen parameters record no graph either way)")
    else:
        from multivec.nugget.encoding import encode_documents

        model.eval()
        for length in (128, 256):
            docs = synthetic_texts(64, 230, 230, seed=2) if length == 256 else texts[:64]
            seconds = timed(lambda: encode_documents(model, docs, batch_size=32, max_tokens=length), 1)
            row[f"docs_per_s_{length}"] = round(len(docs) / seconds, 1)
        row.update(batch_size=32)
    row["peak_rss_mb"] = peak_rss_mb()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument("--steps", type=int, default=3, help="timed steps per case (after one warm-up step)")
    parser.add_argument("--out", type=Path, default=REPO / "results" / "benchmarks" / "nugget_speed.csv")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print("RESULT " + json.dumps(worker(args.worker, args.steps)))
        return

    rows = []
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    for name in args.cases:
        started = time.time()
        threads = CASES[name][3].get("threads", 1)
        proc = subprocess.run([sys.executable, __file__, "--worker", name, "--steps", str(args.steps)],
                              env={**env, "OMP_NUM_THREADS": str(threads)}, capture_output=True, text=True)
        lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
        if proc.returncode != 0 or not lines:
            raise RuntimeError(f"case {name} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        rows.append(json.loads(lines[-1][len("RESULT "):]))
        print(f"{name}: done in {time.time() - started:.0f} s", file=sys.stderr)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    shown = ["case", "threads", "target_vocab", "seconds_per_step", "tokens_per_s", "docs_per_s_128",
             "docs_per_s_256", "padding_fraction", "peak_rss_mb"]
    widths = {c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in shown}
    print("  ".join(c.ljust(widths[c]) for c in shown))
    for r in rows:
        print("  ".join(str(r.get(c, "")).ljust(widths[c]) for c in shown))
    for r in rows:
        if r.get("note"):
            print(f"{r['case']}: {r['note']}")
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
