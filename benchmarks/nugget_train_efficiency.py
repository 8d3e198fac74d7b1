"""What makes demo NUGGET training efficient on a 2-core CPU (the demo must show learning).

Every case trains an AE NUGGET model (MiniLM encoder, l = 3, r = 0.25, batch 16) on the real demo corpus
for the same budget of CPU-seconds of its own process (``time.process_time``, 1 thread: robust to other
jobs sharing the cores), then reports its speed (source tokens/s) and how much it
learned: dev loss in nats per target CHARACTER (tokenizers differ, so per-token losses are not
comparable). Cases:
- ``scratch_bpe``: the Table 2 demo decoder (2-layer MBartDecoder from scratch, byte-level BPE 8000);
- ``warm_first2`` / ``warm_last2``: decoder warm-started from MiniLM's layers 1-2 / 5-6 with new
  cross-attention, output tied to the encoder's word embeddings, MiniLM's WordPiece as target vocabulary
  (``decoder_init: encoder``, Rothe et al. 2020);
- ``warm_first2_lr3e-4``: the same with the pretrained layers' learning rate 3e-4 instead of 1e-4;
- ``cache_miss`` / ``cache_hit``: seconds per training step when the frozen bottom is computed vs read
  from ``BottomCache`` (what every epoch after the first gets);
- ``fp32`` / ``bf16_autocast``: seconds per step with CPU bfloat16 autocast (pays only on CPUs with
  AVX512-BF16/AMX; recorded with the CPU's flags).

    python benchmarks/nugget_train_efficiency.py [--seconds 60] [--cases ...] [--append]

Writes results/benchmarks/nugget_train_efficiency.{csv,png}, naming the machine.
"""

from __future__ import annotations

import argparse
import csv
import math
import platform
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data" / "built" / "corpora" / "autoencoding"  # the main job's AE corpus in this checkout
BASE = dict(encoder="minilm", architecture="bert_decoder", objective="ae", ratio=0.25, scorer_layer=3,
            decoder_layers=2, decoder_heads=6, decoder_ffn=1536, max_source_tokens=128, max_target_tokens=160)
WARM = dict(decoder_init="encoder", target_tokenizer="source")
LEARN_CASES = {
    "scratch_bpe": ({"target_tokenizer": "bpe", "target_vocab_size": 8000}, {}),
    "warm_first2": ({**WARM, "decoder_copy_layers": [0, 1]}, {}),
    "warm_last2": ({**WARM, "decoder_copy_layers": [4, 5]}, {}),
    "warm_first2_lr3e-4": ({**WARM, "decoder_copy_layers": [0, 1]}, {"lr": 3e-4}),
}
SPEED_CASES = ("cache", "bf16")
COLUMNS = ["case", "description", "cpu_seconds", "steps", "cpu_seconds_per_step", "source_tokens_per_cpu_s",
           "dev_nats_per_char", "dev_docs", "target_vocab", "machine"]
DESCRIPTIONS = {
    "scratch_bpe": "decoder from scratch (2 layers), BPE 8000",
    "warm_first2": "decoder warm-started from encoder layers 1-2, WordPiece tied to encoder",
    "warm_last2": "decoder warm-started from encoder layers 5-6, WordPiece tied to encoder",
    "warm_first2_lr3e-4": "warm_first2 with lr 3e-4 (pretrained parameters)",
    "cache_miss": "warm_first2 step, frozen bottom computed",
    "cache_hit": "warm_first2 step, frozen bottom read from BottomCache",
    "fp32": "warm_first2 step on 2 documents, float32",
    "bf16_autocast": "warm_first2 step on 2 documents, CPU bfloat16 autocast",
}


def machine() -> str:
    from multivec.training.distributed import cpu_bf16_units

    name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    units = cpu_bf16_units()
    return f"{name}, {torch.get_num_threads()} thread(s), bf16 units: {' '.join(units) if units else 'no'}"


def build(model_changes: dict, train_rows, dev_rows, n_dev: int):
    from multivec.nugget.configuration import NuggetConfig
    from multivec.nugget.modeling import NuggetModel
    from multivec.nugget.target_tokenizer import TargetTokenizer
    from multivec.nugget.training import tokenize_pairs

    config = NuggetConfig.from_dict({**BASE, **model_changes})
    target = None
    if config.target_tokenizer == "bpe":
        target = TargetTokenizer.train_bpe([r["target"] for r in train_rows], config.target_vocab_size)
    model = NuggetModel.from_backbone(config, target)
    return model, tokenize_pairs(model, train_rows), tokenize_pairs(model, dev_rows[:n_dev])


def optimizer(model, train_changes: dict):
    from multivec.nugget.training import parameter_groups
    from multivec.training.engine import TrainConfig

    cfg = TrainConfig(**{"lr": 1e-4, "lr_scratch": 1e-3, "batch_size": 16, **train_changes})
    return torch.optim.AdamW(parameter_groups(model, cfg), weight_decay=0.0), cfg


def dev_nats_per_char(model, data, dev_rows) -> float:
    from multivec.nugget.training import dev_loss

    loss = dev_loss(model, data, 16, 0, _no_autocast)
    tokens = sum(sum(1 for _ in t[len(model.processor.target_tokenizer.prefix_ids):]) for t in data.targets)
    chars = sum(len(r["target"]) for r in dev_rows)
    return loss * tokens / chars


def _no_autocast():
    return torch.autocast("cpu", enabled=False)


def learn_case(name: str, seconds: float, train_rows, dev_rows, n_dev: int) -> dict:
    from multivec.nugget.training import epoch_batches, make_batch

    model_changes, train_changes = LEARN_CASES[name]
    torch.manual_seed(0)
    model, train, dev = build(model_changes, train_rows, dev_rows, n_dev)
    opt, cfg = optimizer(model, train_changes)
    batches = epoch_batches([len(s) for s in train.sources], cfg.batch_size, 0, 0, True)
    model.train()
    steps, tokens, start = 0, 0, time.process_time()
    while time.process_time() - start < seconds:
        batch = make_batch(model, train, batches[steps % len(batches)], None)
        loss = model(*batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        steps += 1
        tokens += int(batch[1].sum())
    elapsed = time.process_time() - start
    return {"case": name, "cpu_seconds": seconds, "steps": steps, "cpu_seconds_per_step": elapsed / steps,
            "source_tokens_per_cpu_s": tokens / elapsed, "dev_nats_per_char": dev_nats_per_char(model, dev, dev_rows[:n_dev]),
            "dev_docs": n_dev, "target_vocab": model.processor.target_tokenizer.vocab_size}


def step_times(train_rows, dev_rows, steps: int) -> list[dict]:
    """Seconds per step: bottom computed vs cached; float32 vs bf16 autocast."""
    from multivec.nugget.training import BottomCache, epoch_batches, make_batch

    torch.manual_seed(0)
    model, train, _ = build(LEARN_CASES["warm_first2"][0], train_rows, dev_rows, 1)
    opt, cfg = optimizer(model, {})
    batches = epoch_batches([len(s) for s in train.sources], cfg.batch_size, 0, 0, True)[:steps]
    model.train()

    def run(cache=None, autocast=False, small=False) -> tuple[float, int]:
        tokens, start = 0, time.process_time()
        # bf16 on a CPU without bf16 units takes minutes per full step: 2 documents, 1 step say enough.
        for spec in ([batches[0][:2]] if small else batches):
            batch = make_batch(model, train, spec, None, cache)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                loss = model(*batch)
            opt.zero_grad()
            loss.backward()
            opt.step()
            tokens += int(batch[1].sum())
        return time.process_time() - start, tokens

    rows = []
    cache = BottomCache()
    for case, kwargs in (("cache_miss", {"cache": cache}), ("cache_hit", {"cache": cache}),
                         ("fp32", {"small": True}), ("bf16_autocast", {"autocast": True, "small": True})):
        elapsed, tokens = run(**kwargs)
        n = 1 if case in ("fp32", "bf16_autocast") else len(batches)
        rows.append({"case": case, "cpu_seconds": round(elapsed, 1), "steps": n,
                     "cpu_seconds_per_step": elapsed / n, "source_tokens_per_cpu_s": tokens / elapsed,
                     "target_vocab": model.processor.target_tokenizer.vocab_size})
    return rows


def plot(rows: list[dict], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    learned = [r for r in rows if r.get("dev_nats_per_char") is not None]
    left.barh([r["case"] for r in learned], [r["dev_nats_per_char"] for r in learned], color="tab:blue")
    left.set_xlabel(f"dev loss, nats/character after {learned[0]['cpu_seconds']:.0f} CPU-s (lower is better)"
                    if learned else "dev loss")
    right.barh([r["case"] for r in rows], [r["cpu_seconds_per_step"] for r in rows], color="tab:orange")
    right.set_xlabel("CPU-seconds per training step (batch 16, 1 thread)")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    from multivec.nugget.training import read_pairs

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0, help="CPU-seconds of training per learning case")
    parser.add_argument("--cases", nargs="*", default=[*LEARN_CASES, *SPEED_CASES])
    parser.add_argument("--speed-steps", type=int, default=4)
    parser.add_argument("--dev-docs", type=int, default=32)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--append", action="store_true", help="keep the CSV's other cases (run cases in parts)")
    parser.add_argument("--out", type=Path, default=REPO / "results" / "benchmarks" / "nugget_train_efficiency")
    args = parser.parse_args()
    torch.set_num_threads(1)
    train_rows, dev_rows = read_pairs(args.data / "train.jsonl"), read_pairs(args.data / "dev.jsonl")
    where = machine()
    rows = []
    for name in args.cases:
        if name in LEARN_CASES:
            rows.append(learn_case(name, args.seconds, train_rows, dev_rows, args.dev_docs))
        elif name in SPEED_CASES and not any(r["case"] == "cache_miss" for r in rows):
            rows += step_times(train_rows, dev_rows, args.speed_steps)
        elif name not in SPEED_CASES:
            raise SystemExit(f"unknown case {name!r}; known: {', '.join([*LEARN_CASES, *SPEED_CASES])}")
        print(rows[-1], flush=True)
    for row in rows:
        row["description"] = DESCRIPTIONS[row["case"]]
        row["machine"] = where
    args.out.parent.mkdir(parents=True, exist_ok=True)
    rows = [{k: (f"{v:.4g}" if isinstance(v, float) and math.isfinite(v) else v) for k, v in row.items()
             if k in COLUMNS} for row in rows]
    if args.append and args.out.with_suffix(".csv").exists():  # earlier cases, replaced where re-run
        with open(args.out.with_suffix(".csv"), newline="") as handle:
            earlier = [r for r in csv.DictReader(handle) if r["case"] not in {row["case"] for row in rows}]
        rows = earlier + rows
    with open(args.out.with_suffix(".csv"), "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    for row in rows:
        for key in ("cpu_seconds", "cpu_seconds_per_step", "dev_nats_per_char"):
            row[key] = float(row[key]) if row.get(key) not in (None, "") else None
    plot(rows, args.out.with_suffix(".png"), f"NUGGET AE r=0.25 demo training on {where}")
    print(f"wrote {args.out.with_suffix('.csv')} and .png")


if __name__ == "__main__":
    main()
