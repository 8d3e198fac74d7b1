"""CPU bfloat16 against float32 for the demo's NUGGET training: how fast, and what the model learns.

Trains one NUGGET model of the demo twice from the same seed on the same batches, once per precision
(``train.precision``: ``fp32``, the demo's default, and ``bf16``, CPU autocast), through the project's own
training entry point (``multivec.nugget.training.train``) with the settings the rules give that model
(``config/config.yaml``: ``nugget``; ``train`` + ``nugget_analysis.train``, + ``nugget_base.train`` for the
shared r = 1 model). The trainings run side by side, one thread each, as the demo runs two training jobs on
two cores, so a busy machine slows both alike (the CSV records the 1-minute load average before and after).
From each run's ``metrics.csv``: dev loss against documents read and against wall seconds; from its process,
documents read per CPU-second (set-up and dev evaluations included, as a rule's job pays them). The ratio of
documents per CPU-second and the dev-loss difference at equal documents read are the result.

bf16 pays only on a CPU with bfloat16 units (``multivec.training.distributed.cpu_bf16_units``: x86
``avx512_bf16``/``amx_bf16``, Arm ``bf16``); elsewhere the engine refuses it, and so does this script.

    python benchmarks/nugget_precision.py                                 # the AE r = 1 model, its 300 demo steps
    python benchmarks/nugget_precision.py --steps 100 --variant r0.25_l3_learned_fb \\
        --init models/nugget/ae/base_r1/seed13                            # a zoo model, from the trained base
    python benchmarks/nugget_precision.py --configfile config/smoke.yaml --precisions fp32 --out /tmp/p

Needs the main job's training corpus in this checkout (``data/built/corpora/<corpus>/``). Writes
``results/benchmarks/nugget_precision.{csv,png}``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

REPO = Path(__file__).resolve().parents[1]
PRECISIONS = ("fp32", "bf16")
CORPORA = {"ae": "autoencoding", "mt": "translation"}
CPU_FILE = "cpu_seconds.json"  # what each training process used, written by its worker
COLUMNS = ["precision", "step", "documents_read", "dev_loss", "elapsed_s", "documents_per_s",
           "run_cpu_seconds", "run_documents_per_cpu_s", "variant",
           "objective", "batch_size", "machine", "bf16_units", "load_1min_start", "load_1min_end"]


class BenchmarkError(RuntimeError):
    """A request this benchmark cannot measure: said before anything trains."""


def load_config(configfiles: Sequence[str | os.PathLike]) -> dict[str, Any]:
    """config/config.yaml, then each overlay, merged as Snakemake merges --configfile."""
    import yaml
    from snakemake.utils import update_config

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    for path in configfiles:
        update_config(config, yaml.safe_load(Path(path).read_text()))
    return config


def model_settings(config: dict[str, Any], objective: str, variant: str, steps: int | None) -> tuple[dict, dict]:
    """The model's NuggetConfig fields and TrainConfig fields as the rules set them (one thread, CPU)."""
    from multivec.rules.nugget_zoo import NuggetZoo

    zoo = NuggetZoo(config)
    model = zoo.zoo_model_config(objective, variant)
    train = {**zoo.zoo_train_config(variant), "threads": 1, "device": "cpu"}
    if steps is not None:
        train["max_steps"] = steps
    return model, train


def check_request(precisions: Sequence[str], data: Path, init: str | None) -> None:
    """Refuse what cannot be measured, before anything trains."""
    from multivec.training.distributed import cpu_bf16_units

    unknown = [p for p in precisions if p not in PRECISIONS]
    if unknown or not precisions:
        raise BenchmarkError(f"--precisions {list(precisions)}: expected some of {list(PRECISIONS)}")
    if "bf16" in precisions and not cpu_bf16_units():
        raise BenchmarkError("bf16 asked for, but this CPU has no bfloat16 units (x86 avx512_bf16 or amx_bf16, Arm "
                             "bf16 in /proc/cpuinfo): bf16 would be emulated, several times slower than fp32, and "
                             "the engine refuses it; run on a CPU that has them, or pass --precisions fp32")
    for name in ("train.jsonl", "dev.jsonl"):
        if not (data / name).is_file():
            raise BenchmarkError(f"{data / name} is missing: build the main job's corpus first "
                                 f"(snakemake --cores all {data.relative_to(REPO) if data.is_relative_to(REPO) else data}"
                                 f"/{name}), or pass --data")
    if init is not None and not (Path(init) / "config.json").is_file():
        raise BenchmarkError(f"--init {init}: no saved model there (config.json missing)")


def worker(precision: str, spec_path: Path) -> None:
    """One training: the spec's model and training settings at ``precision``, into the spec's folder."""
    from multivec.nugget.configuration import NuggetConfig
    from multivec.nugget.training import TrainConfig, train

    spec = json.loads(spec_path.read_text())
    settings = {**spec["train"], "precision": precision}
    # the rules pass the time safety net as a resource, not a setting (multivec.training.safety_net)
    train_config = TrainConfig.from_rule(settings, settings.pop("max_minutes", 0))
    out = Path(spec["out"]) / precision
    summary = train(NuggetConfig.from_dict(spec["model"]), train_config, spec["train_path"], spec["dev_path"], out,
                    init_from=spec["init"])
    # CPU-seconds of this one-thread process (set-up, training and dev evaluations): robust to other jobs
    (out / CPU_FILE).write_text(json.dumps({"cpu_seconds": time.process_time(), "steps": summary["train_steps"]}))


def run_side_by_side(precisions: Sequence[str], spec: dict[str, Any], work: Path) -> dict[str, Path]:
    """Each precision's training in its own one-thread process, all at once; their output folders."""
    spec_path = work / "spec.json"
    spec_path.write_text(json.dumps(spec))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    processes = {p: subprocess.Popen([sys.executable, __file__, "--worker", p, "--spec", str(spec_path)], env=env,
                                     stdout=subprocess.DEVNULL, stderr=open(work / f"{p}.log", "w"))
                 for p in precisions}
    failed = {p: proc.wait() for p, proc in processes.items()}
    failed = {p: code for p, code in failed.items() if code != 0}
    if failed:
        tails = "\n".join(f"--- {p} (exit {code}):\n" + (work / f"{p}.log").read_text()[-2000:]
                          for p, code in failed.items())
        raise BenchmarkError(f"training failed:\n{tails}")
    return {p: Path(spec["out"]) / p for p in precisions}


def read_curve(folder: Path, precision: str, batch_size: int) -> list[dict[str, Any]]:
    """metrics.csv's dev evaluations as rows: documents read = step x batch size."""
    rows = []
    with open(folder / "metrics.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            if row.get("dev_loss") in (None, ""):
                continue
            step, elapsed = int(row["step"]), float(row["elapsed_s"])
            rows.append({"precision": precision, "step": step, "documents_read": step * batch_size,
                         "dev_loss": float(row["dev_loss"]), "elapsed_s": elapsed,
                         "documents_per_s": step * batch_size / elapsed if elapsed > 0 else None})
    if not rows:
        raise BenchmarkError(f"{folder / 'metrics.csv'}: no dev evaluation was written")
    used = json.loads((folder / CPU_FILE).read_text())
    for row in rows:  # the whole run's CPU-seconds, on every row of its curve
        row.update(run_cpu_seconds=used["cpu_seconds"],
                   run_documents_per_cpu_s=used["steps"] * batch_size / used["cpu_seconds"])
    return rows


def summary_lines(curves: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Documents per CPU-second of each run and the last common evaluation's dev loss, against fp32."""
    lines = []
    base = curves.get("fp32")
    for precision, rows in curves.items():
        last = rows[-1]
        line = (f"{precision}: {last['documents_read']} documents in {last['run_cpu_seconds']:.0f} CPU-s "
                f"({last['run_documents_per_cpu_s']:.2f}/CPU-s), dev loss {last['dev_loss']:.4f}")
        if base is not None and precision != "fp32":
            step = max({r["step"] for r in base} & {r["step"] for r in rows})
            ours = next(r for r in rows if r["step"] == step)
            theirs = next(r for r in base if r["step"] == step)
            line += (f"; vs fp32: {last['run_documents_per_cpu_s'] / base[-1]['run_documents_per_cpu_s']:.2f}x "
                     f"documents per CPU-second, dev loss {ours['dev_loss'] - theirs['dev_loss']:+.4f} at "
                     f"{ours['documents_read']} documents read")
        lines.append(line)
    return lines


def plot(curves: dict[str, list[dict[str, Any]]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for precision, rows in curves.items():
        left.plot([r["documents_read"] for r in rows], [r["dev_loss"] for r in rows], marker="o", label=precision)
        right.plot([r["elapsed_s"] for r in rows], [r["dev_loss"] for r in rows], marker="o", label=precision)
    left.set_xlabel("documents read")
    right.set_xlabel("wall seconds (the runs side by side, one thread each)")
    for ax in (left, right):
        ax.set_ylabel("dev loss (nats per target token)")
        ax.legend()
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def machine() -> str:
    name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return name


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objective", choices=sorted(CORPORA), default="ae")
    parser.add_argument("--variant", default="base_r1", help="the zoo variant (default: the shared r = 1 model)")
    parser.add_argument("--init", help="a saved model the training starts from (the zoo's models start from the base)")
    parser.add_argument("--steps", type=int, help="training steps (default: the model's demo steps)")
    parser.add_argument("--precisions", nargs="+", default=list(PRECISIONS))
    parser.add_argument("--configfile", nargs="*", default=[], help="overlays on config/config.yaml")
    parser.add_argument("--data", type=Path, help="the corpus folder (default: data/built/corpora/<corpus>)")
    parser.add_argument("--out", type=Path, default=REPO / "results" / "benchmarks" / "nugget_precision")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--spec", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker, args.spec)
        return 0
    from multivec.training.distributed import cpu_bf16_units

    data = args.data or REPO / "data" / "built" / "corpora" / CORPORA[args.objective]
    try:
        check_request(args.precisions, data, args.init)
        config = load_config(args.configfile)
        model, train = model_settings(config, args.objective, args.variant, args.steps)
        with tempfile.TemporaryDirectory(prefix="nugget_precision_") as work:
            spec = {"model": model, "train": train, "train_path": str(data / "train.jsonl"),
                    "dev_path": str(data / "dev.jsonl"), "init": args.init, "out": str(Path(work) / "runs")}
            started, load_start = time.time(), os.getloadavg()[0]
            folders = run_side_by_side(args.precisions, spec, Path(work))
            load_end = os.getloadavg()[0]
            curves = {p: read_curve(folders[p], p, train["batch_size"]) for p in args.precisions}
    except BenchmarkError as error:
        print(f"nugget_precision: {error}", file=sys.stderr)
        return 2
    where, units = machine(), " ".join(cpu_bf16_units()) or "none"
    rows = [{**r, "variant": args.variant, "objective": args.objective, "batch_size": train["batch_size"],
             "machine": where, "bf16_units": units, "load_1min_start": load_start, "load_1min_end": load_end}
            for p in args.precisions for r in curves[p]]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out.with_suffix(".csv"), "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    lines = summary_lines(curves)
    plot(curves, args.out.with_suffix(".png"), f"NUGGET {args.objective.upper()} {args.variant}, "
         f"{train['max_steps']} steps of {train['batch_size']}: {where}, bf16 units {units}")
    print("\n".join(lines))
    print(f"wrote {args.out.with_suffix('.csv')} and .png in {time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
