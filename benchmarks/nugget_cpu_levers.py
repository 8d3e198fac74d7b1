"""CPU speed levers of the demo's NUGGET training: what each buys in documents per CPU-second, and what the model
learns with it.

Trains one NUGGET model of the demo several times from the same seed on the same batches, once per run, through
the project's own training entry point (``multivec.nugget.training.train``) with the settings the rules give that
model (``config/config.yaml``: ``nugget``; ``train`` + ``nugget_analysis.train``, + ``nugget_base.train`` for the
shared r = 1 model). A run is a precision with optional levers, joined by ``+``:

- ``fp32`` (the demo's default, the reference: the first run named is the one the others are compared with);
- ``bf16``: CPU autocast (``train.precision``), which pays only on a CPU with bfloat16 units
  (``multivec.training.distributed.cpu_bf16_units``: x86 ``avx512_bf16``/``amx_bf16``, Arm ``bf16``); elsewhere
  the engine refuses it, and so does this script;
- ``+fused``: AdamW's fused kernel (``train.fused_optimizer``);
- ``+compile``: ``torch.compile`` of each transformer layer (``train.compile``), compiled cold in the run's own
  process and cache, so the compile time is in its CPU-seconds as a rule's job would pay it.

The runs go ``--parallel`` at a time (2: the demo runs two training jobs on two cores), one thread each, so a
busy machine slows both alike (the CSV records the 1-minute load average before and after). From each run's
``metrics.csv``: dev loss against documents read and against wall seconds; from its process, documents read per
CPU-second (set-up, compilation and dev evaluations included). The ratio of documents per CPU-second and the
dev-loss difference at equal documents read are the result. Before any step the runs evaluate the same weights
(``eval_at_start``): a run whose first dev loss is not the reference's within its precision's tolerance computes
something else, and the benchmark stops naming it.

    python benchmarks/nugget_cpu_levers.py                                # fp32 and bf16, the AE r = 1 model
    python benchmarks/nugget_cpu_levers.py --steps 100 --runs fp32 fp32+fused+compile bf16 bf16+fused+compile
    python benchmarks/nugget_cpu_levers.py --variant r0.25_l3_learned_fb --init models/nugget/ae/base_r1/seed13 \\
        --runs fp32 bf16 --out results/benchmarks/nugget_cpu_levers_zoo   # a zoo model, from the trained base
    python benchmarks/nugget_cpu_levers.py --configfile config/smoke.yaml --runs fp32 --out /tmp/p

Needs the main job's training corpus in this checkout (``data/built/corpora/<corpus>/``) or ``--data``. Writes
``results/benchmarks/nugget_cpu_levers.{csv,png}`` (or ``--out``); ``--replot CSV`` redraws a CSV's figure and
summary.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from bench_common import cpu_name, load_average  # noqa: E402

from multivec.io import write_csv  # noqa: E402

PRECISIONS = ("fp32", "bf16")
LEVERS = {"fused": "fused_optimizer", "compile": "compile"}  # run-name part: TrainConfig field
CORPORA = {"ae": "autoencoding", "mt": "translation"}
CPU_FILE = "cpu_seconds.json"  # what each training process used, written by its worker
# How far a run's dev loss on the untrained weights may be from the reference's, relative: fp32 kernels that
# reorder sums (fused, compiled) agree to about 1e-6; bf16 autocast rounds activations to 8 bits of mantissa.
FIRST_LOSS_TOLERANCE = {"fp32": 1e-4, "bf16": 2e-2}
COLUMNS = ["run", "precision", "levers", "step", "documents_read", "dev_loss", "elapsed_s", "documents_per_s",
           "run_cpu_seconds", "run_documents_per_cpu_s", "variant", "objective", "batch_size", "machine",
           "bf16_units", "load_1min_start", "load_1min_end"]


class BenchmarkError(RuntimeError):
    """A request this benchmark cannot measure, said before anything trains, or a run that disagrees."""


def load_config(configfiles: Sequence[str | os.PathLike]) -> dict[str, Any]:
    """config/config.yaml, then each overlay, read as the workflow reads them (``read_config_file``: a bad
    file is named with its line) and merged as Snakemake merges --configfile."""
    from snakemake.utils import update_config

    from multivec.config.yaml_files import read_config_file

    config = read_config_file(REPO / "config" / "config.yaml")
    for path in configfiles:
        update_config(config, read_config_file(path))
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


def parse_run(name: str) -> tuple[str, list[str]]:
    """``bf16+fused+compile`` -> ("bf16", ["fused", "compile"]); anything else is refused."""
    precision, *levers = name.split("+")
    if precision not in PRECISIONS or any(lever not in LEVERS for lever in levers) or len(set(levers)) != len(levers):
        raise BenchmarkError(f"run {name!r}: expected a precision ({', '.join(PRECISIONS)}) with optional "
                             f"{', '.join('+' + lever for lever in LEVERS)}, e.g. bf16+fused+compile")
    return precision, levers


def check_request(runs: Sequence[str], data: Path, init: str | None, parallel: int = 2) -> None:
    """Refuse what cannot be measured, before anything trains."""
    from multivec.training.distributed import cpu_bf16_units

    if not runs or len(set(runs)) != len(runs):
        raise BenchmarkError(f"--runs {list(runs)}: name one or more runs, each once")
    precisions = {parse_run(run)[0] for run in runs}
    if parallel < 1:
        raise BenchmarkError(f"--parallel {parallel}: must be >= 1")
    if "bf16" in precisions and not cpu_bf16_units():
        raise BenchmarkError("bf16 asked for, but this CPU has no bfloat16 units (x86 avx512_bf16 or amx_bf16, Arm "
                             "bf16 in /proc/cpuinfo): bf16 would be emulated, several times slower than fp32, and "
                             "the engine refuses it; run on a CPU that has them, or pass --runs fp32")
    for name in ("train.jsonl", "dev.jsonl"):
        if not (data / name).is_file():
            raise BenchmarkError(f"{data / name} is missing: build the main job's corpus first "
                                 f"(snakemake --cores all {data.relative_to(REPO) if data.is_relative_to(REPO) else data}"
                                 f"/{name}), or pass --data")
    if init is not None and not (Path(init) / "config.json").is_file():
        raise BenchmarkError(f"--init {init}: no saved model there (config.json missing)")


def worker(run: str, spec_path: Path) -> None:
    """One training: the spec's model and training settings with the run's precision and levers."""
    from multivec.nugget.configuration import NuggetConfig
    from multivec.nugget.training import TrainConfig, train

    spec = json.loads(spec_path.read_text())
    precision, levers = parse_run(run)
    settings = {**spec["train"], "precision": precision, **{LEVERS[lever]: True for lever in levers}}
    # the rules pass the time safety net as a resource, not a setting (multivec.training.safety_net)
    train_config = TrainConfig.from_rule(settings, settings.pop("max_minutes", 0))
    out = Path(spec["out"]) / run
    summary = train(NuggetConfig.from_dict(spec["model"]), train_config, spec["train_path"], spec["dev_path"], out,
                    init_from=spec["init"])
    # CPU-seconds of this one-thread process (set-up, compilation, training and dev evaluations)
    (out / CPU_FILE).write_text(json.dumps({"cpu_seconds": time.process_time(), "steps": summary["train_steps"]}))


def run_side_by_side(runs: Sequence[str], spec: dict[str, Any], work: Path, parallel: int = 2) -> dict[str, Path]:
    """Each run's training in its own one-thread process, ``parallel`` at a time in the order given; their output
    folders. Compilation runs in the process itself, into a cache of its own (cold, as a first job's)."""
    spec_path = work / "spec.json"
    spec_path.write_text(json.dumps(spec))
    base_env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
                "TORCHINDUCTOR_COMPILE_THREADS": "1"}
    failed: dict[str, int] = {}
    pending = list(runs)
    while pending:
        wave, pending = pending[:parallel], pending[parallel:]
        processes = {}
        for run in wave:
            env = {**base_env, "TORCHINDUCTOR_CACHE_DIR": str(work / f"inductor_{run}")}
            with open(work / f"{run}.log", "w") as log:  # the child keeps its own copy of the handle
                processes[run] = subprocess.Popen([sys.executable, __file__, "--worker", run, "--spec",
                                                   str(spec_path)], env=env, stdout=subprocess.DEVNULL, stderr=log)
        failed.update({run: code for run, code in ((r, p.wait()) for r, p in processes.items()) if code != 0})
    if failed:
        tails = "\n".join(f"--- {run} (exit {code}):\n" + (work / f"{run}.log").read_text()[-2000:]
                          for run, code in failed.items())
        raise BenchmarkError(f"training failed:\n{tails}")
    return {run: Path(spec["out"]) / run for run in runs}


def read_curve(folder: Path, run: str, batch_size: int) -> list[dict[str, Any]]:
    """metrics.csv's dev evaluations as rows: documents read = step x batch size."""
    precision, levers = parse_run(run)
    rows = []
    with open(folder / "metrics.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            if row.get("dev_loss") in (None, ""):
                continue
            step, elapsed = int(row["step"]), float(row["elapsed_s"])
            rows.append({"run": run, "precision": precision, "levers": "+".join(levers) or "none", "step": step,
                         "documents_read": step * batch_size, "dev_loss": float(row["dev_loss"]),
                         "elapsed_s": elapsed, "documents_per_s": step * batch_size / elapsed if elapsed > 0 else None})
    if not rows:
        raise BenchmarkError(f"{folder / 'metrics.csv'}: no dev evaluation was written")
    used = json.loads((folder / CPU_FILE).read_text())
    for row in rows:  # the whole run's CPU-seconds, on every row of its curve
        row.update(run_cpu_seconds=used["cpu_seconds"],
                   run_documents_per_cpu_s=used["steps"] * batch_size / used["cpu_seconds"])
    return rows


def check_first_losses(curves: dict[str, list[dict[str, Any]]]) -> None:
    """Every run's dev loss before its first step (step 0) within its precision's tolerance of the reference's
    (the first run): the same weights, the same documents. Runs without a step-0 evaluation are not checked."""
    reference_run, reference = next(iter(curves.items()))
    if reference[0]["step"] != 0:
        return
    for run, rows in curves.items():
        if rows[0]["step"] != 0:
            continue
        relative = abs(rows[0]["dev_loss"] - reference[0]["dev_loss"]) / abs(reference[0]["dev_loss"])
        tolerance = max(FIRST_LOSS_TOLERANCE[rows[0]["precision"]], FIRST_LOSS_TOLERANCE[reference[0]["precision"]])
        if relative > tolerance:
            raise BenchmarkError(f"run {run}: dev loss {rows[0]['dev_loss']:.6f} on the untrained weights, the "
                                 f"reference {reference_run} {reference[0]['dev_loss']:.6f} (relative difference "
                                 f"{relative:.2e} > {tolerance:.0e}): it computes another model; not a speed result")


def summary_lines(curves: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Documents per CPU-second of each run and its dev loss at the last evaluation both it and the reference
    (the first run) reached, against the reference's."""
    lines = []
    reference_run, base = next(iter(curves.items()))
    for run, rows in curves.items():
        last = rows[-1]
        line = (f"{run}: {last['documents_read']} documents in {last['run_cpu_seconds']:.0f} CPU-s "
                f"({last['run_documents_per_cpu_s']:.2f}/CPU-s), dev loss {last['dev_loss']:.4f}")
        if run != reference_run:
            step = max({r["step"] for r in base} & {r["step"] for r in rows})
            ours = next(r for r in rows if r["step"] == step)
            theirs = next(r for r in base if r["step"] == step)
            line += (f"; vs {reference_run}: "
                     f"{last['run_documents_per_cpu_s'] / base[-1]['run_documents_per_cpu_s']:.2f}x "
                     f"documents per CPU-second, dev loss {ours['dev_loss'] - theirs['dev_loss']:+.4f} at "
                     f"{ours['documents_read']} documents read")
        lines.append(line)
    return lines


def plot(curves: dict[str, list[dict[str, Any]]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    reference = next(iter(curves.values()))[-1]["run_documents_per_cpu_s"]
    for run, rows in curves.items():
        label = f"{run}: {rows[-1]['run_documents_per_cpu_s'] / reference:.2f}x documents per CPU-s"
        left.plot([r["documents_read"] for r in rows], [r["dev_loss"] for r in rows], marker="o", label=label)
        right.plot([r["elapsed_s"] for r in rows], [r["dev_loss"] for r in rows], marker="o", label=run)
    left.set_xlabel("documents read")
    right.set_xlabel("wall seconds of the run (one thread)")
    for ax in (left, right):
        ax.set_yscale("log")  # the runs differ by hundredths of a nat at the end of a curve that starts at ~8
        ax.yaxis.set_major_formatter(ticker.ScalarFormatter())
        ax.yaxis.set_minor_formatter(ticker.ScalarFormatter())
        ax.set_ylabel("dev loss (nats per target token, log scale)")
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def read_results(path: Path) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    """A CSV this script wrote, back as curves (numbers as numbers) and the settings of its first row."""
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    if not rows or set(COLUMNS) - set(rows[0]):
        raise BenchmarkError(f"{path}: not a CSV of this benchmark (columns {COLUMNS})")
    curves: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        for key in ("step", "documents_read", "batch_size"):
            row[key] = int(row[key])
        for key in ("dev_loss", "elapsed_s", "run_cpu_seconds", "run_documents_per_cpu_s"):
            row[key] = float(row[key])
        curves.setdefault(row["run"], []).append(row)
    return curves, rows[0]


def output_path(out: Path, extension: str) -> Path:
    """out + extension; ``--out results/x_r0.25`` keeps its ``.25`` (``with_suffix`` would replace it)."""
    return out.with_name(out.name.removesuffix(".csv").removesuffix(".png") + extension)


def title_of(objective: str, variant: str, steps: int, batch_size: int, parallel: int, where: str, units: str) -> str:
    return (f"NUGGET {objective.upper()} {variant}, {steps} steps of {batch_size}, {parallel} runs at a time, one "
            f"thread each: {where}, bf16 units {units}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objective", choices=sorted(CORPORA), default="ae")
    parser.add_argument("--variant", default="base_r1", help="the zoo variant (default: the shared r = 1 model)")
    parser.add_argument("--init", help="a saved model the training starts from (the zoo's models start from the base)")
    parser.add_argument("--steps", type=int, help="training steps (default: the model's demo steps)")
    parser.add_argument("--runs", "--precisions", dest="runs", nargs="+", default=list(PRECISIONS),
                        help="precision[+fused][+compile] per run; the first is the reference")
    parser.add_argument("--parallel", type=int, default=2, help="runs at a time, one thread each")
    parser.add_argument("--configfile", nargs="*", default=[], help="overlays on config/config.yaml")
    parser.add_argument("--data", type=Path, help="the corpus folder (default: data/built/corpora/<corpus>)")
    parser.add_argument("--out", type=Path, default=REPO / "results" / "benchmarks" / "nugget_cpu_levers")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--spec", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--replot", type=Path, help="redraw the figure and summary of a CSV this script wrote")
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker, args.spec)
        return 0
    if args.replot:
        try:
            curves, first = read_results(args.replot)
        except BenchmarkError as error:
            print(f"nugget_cpu_levers: {error}", file=sys.stderr)
            return 2
        steps = max(r["step"] for rows in curves.values() for r in rows)
        plot(curves, output_path(args.replot, ".png"), title_of(first["objective"], first["variant"], steps,
             first["batch_size"], args.parallel, first["machine"], first["bf16_units"]))
        print("\n".join(summary_lines(curves)))
        return 0
    from multivec.training.distributed import cpu_bf16_units

    data = args.data or REPO / "data" / "built" / "corpora" / CORPORA[args.objective]
    try:
        check_request(args.runs, data, args.init, args.parallel)
        config = load_config(args.configfile)
        model, train = model_settings(config, args.objective, args.variant, args.steps)
        with tempfile.TemporaryDirectory(prefix="nugget_cpu_levers_") as work:
            spec = {"model": model, "train": train, "train_path": str(data / "train.jsonl"),
                    "dev_path": str(data / "dev.jsonl"), "init": args.init, "out": str(Path(work) / "runs")}
            started, load_start = time.time(), load_average()
            folders = run_side_by_side(args.runs, spec, Path(work), args.parallel)
            load_end = load_average()
            curves = {run: read_curve(folders[run], run, train["batch_size"]) for run in args.runs}
        check_first_losses(curves)
    except BenchmarkError as error:
        print(f"nugget_cpu_levers: {error}", file=sys.stderr)
        return 2
    where, units = cpu_name(), " ".join(cpu_bf16_units()) or "none"
    rows = [{**r, "variant": args.variant, "objective": args.objective, "batch_size": train["batch_size"],
             "machine": where, "bf16_units": units, "load_1min_start": load_start, "load_1min_end": load_end}
            for run in args.runs for r in curves[run]]
    write_csv(output_path(args.out, ".csv"), [{column: row[column] for column in COLUMNS} for row in rows])
    lines = summary_lines(curves)
    plot(curves, output_path(args.out, ".png"), title_of(args.objective, args.variant, train["max_steps"],
                                                       train["batch_size"], args.parallel, where, units))
    print("\n".join(lines))
    print(f"wrote {output_path(args.out, '.csv')} and .png in {time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
