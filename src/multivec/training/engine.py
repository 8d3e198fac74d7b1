"""One training loop for every model: NUGGET/TSDAE (Qin & Van Durme 2023, §4), and the coming
sub-sentence encoder (Chen et al. 2023, §3: SupCon over all-gathered embeddings) and distilled
long-document student (Burian 2023: accumulation, fp16, cosine schedule with warm-up).

A model plugs in as a ``TrainingTask``: it builds its module, supplies batches (the batch order is a pure
function of (seed, epoch), any noise a pure function of (seed, step)), its loss, its dev evaluation
(a dict of metrics, one of which selects the best weights), parameter groups and save/load of weights and
metadata. ``Trainer`` owns everything else: AdamW with linear or cosine warm-up schedules, gradient
accumulation and clipping, bf16/fp16 autocast (fp16 with a GradScaler), DDP under torchrun, best-by-dev,
``metrics.csv``, progress, atomic checkpoints and exact resumption (on CPU a killed and resumed run ends
byte-identical to an uninterrupted one), and a wall-clock safety net that fails loudly.

Speed levers for GPUs, off by default: ``fused_optimizer`` (AdamW's fused kernel) and ``compile``
(``torch.compile`` on each repeated block, ``training.compilation``); and no host synchronisation inside a
step: the micro-batches' losses are read once the optimizer has stepped.

Random numbers: every draw of training comes from torch. The batch order is ``seeded_generator(seed, "epoch",
e)`` (``training.batching``), a batch's noise (TSDAE deletion) draws from the ``seeded_generator(seed,
"step", s, micro)`` passed to ``make_batch``, the random nugget selector from a torch generator seeded by
(seed, document) (``nugget.selection``), and dropout (and mBART's LayerDrop,
``torch.rand`` in transformers) from torch's global generator, seeded with ``seed + rank`` and saved in
every checkpoint (``rng.pt``, with the CUDA generators). Nothing a trainer runs draws from Python's
``random`` or NumPy's global generator: no training task, batching or collating code calls them (a data
builder that samples uses its own ``random.Random(seed)`` or ``np.random.default_rng(seed)``, before
training), and neither do the backbones' transformers code (BERT/MiniLM, mBART, T5, Longformer, MPNet) or
tokenizers. So their states cannot change a result; a checkpoint does not store them and resuming does not
set them (before, a resumed run set them to the killed process's, which differed from an uninterrupted
run's without changing anything). ``tests/test_resume_exact.py`` checks that a training run, uninterrupted
or resumed, leaves both states as it found them, for every trainer: a new ``random``/``np.random`` draw
fails it, and must then use a seeded generator of its own.

Outputs in ``out_dir``: ``model.safetensors`` (best dev weights), the task's metadata (``config.json`` …),
``metrics.csv``, ``training_summary.json`` and ``checkpoint/``.

Test hook: with ``MULTIVEC_KILL_AFTER_STEP=<n>`` in the environment the process kills itself with SIGKILL
right after step n (after its evaluation and checkpoint, when due), as ``kill -9`` would;
``tests/test_resume_exact.py`` kills every trainer this way and resumes it through its entry point.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
import math
import os
import shutil
import signal
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import torch
from torch import nn

from multivec.io import read_json, write_json
from multivec.config.dataclass_config import from_dict
from multivec.training import checkpoint as ckpt
from multivec.training.distributed import PRECISIONS, Runtime, setup_runtime
from multivec.training.metrics import METRICS_FILE, metric_columns, write_metrics
from multivec.training.safety_net import join_safety_net

log = logging.getLogger(__name__)

SUMMARY_FILE = "training_summary.json"
WEIGHTS_FILE = ckpt.WEIGHTS_FILE
SCHEDULES = ("linear", "cosine", "constant")
# Train-config keys that may change when a run is resumed: they do not change the arithmetic (the device and
# the kernels may round differently, as they do between machines).
RESUMABLE_CHANGES = {"max_minutes", "threads", "device", "fused_optimizer", "compile"}
KILL_AFTER_STEP_ENV = "MULTIVEC_KILL_AFTER_STEP"  # test hook (module docstring)


@dataclass
class TrainConfig:
    max_steps: int = 1000  # optimizer steps; the only budget (results never depend on the machine's speed)
    batch_size: int = 16  # per rank and micro-batch
    lr: float = 5e-5  # pretrained parameters (NUGGET paper's learning rate)
    lr_scratch: float | None = None  # parameters trained from scratch; None: lr
    schedule: str = "linear"  # "linear" | "cosine": decay to 0 at max_steps after a linear warm-up; "constant"
    warmup_steps: int = 0
    weight_decay: float = 0.0  # AdamW; never applied to biases and norm scales (1-D parameters)
    grad_clip: float | None = 1.0  # max global gradient norm; None: no clipping
    grad_accumulation: int = 1  # micro-batches per optimizer step (loss averaged over them)
    eval_every: int = 100
    checkpoint_every: int = 100
    seed: int = 0
    threads: int | None = None  # torch intra-op threads; None leaves torch's default
    device: str = "auto"  # "auto" | "cpu" | "cuda"
    precision: str = "fp32"  # "fp32" | "bf16" (autocast: CUDA, or a CPU with bf16 units) | "fp16" (+ GradScaler: CUDA)
    length_sorted: bool = True  # batches of similar length (the task decides how)
    dev_batch_size: int | None = None  # None: batch_size
    max_minutes: float | None = None  # safety net: a run past it FAILS (checkpoint kept); None: no limit
    eval_at_start: bool = False  # also evaluate before the first step (a metrics row at step 0)
    # Speed levers for GPUs, off by default (the demo's CPU results stay those of eager, unfused kernels):
    fused_optimizer: bool = False  # AdamW's fused kernel (torch.optim.AdamW(fused=True)): one launch per step
    compile: bool = False  # torch.compile each repeated block in place (multivec.training.compilation)

    def __post_init__(self) -> None:
        for key in ("max_steps", "batch_size", "eval_every", "checkpoint_every", "grad_accumulation"):
            if getattr(self, key) < 1:
                raise ValueError(f"TrainConfig.{key}={getattr(self, key)!r}: must be >= 1")
        if self.device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"TrainConfig.device={self.device!r}: expected 'auto', 'cpu' or 'cuda'")
        if self.precision not in PRECISIONS:
            raise ValueError(f"TrainConfig.precision={self.precision!r}: expected one of {', '.join(PRECISIONS)}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"TrainConfig.schedule={self.schedule!r}: expected one of {', '.join(SCHEDULES)}")
        if self.warmup_steps < 0 or self.warmup_steps > self.max_steps:
            raise ValueError(f"TrainConfig.warmup_steps={self.warmup_steps}: must be in [0, max_steps]")
        if self.max_minutes is not None and self.max_minutes <= 0:
            raise ValueError(f"TrainConfig.max_minutes={self.max_minutes}: must be > 0 or None")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TrainConfig":
        return from_dict(cls, data, "TrainConfig")

    @classmethod
    def from_rule(cls, settings: dict[str, Any], safety_net_minutes: int | float) -> "TrainConfig":
        """A training rule's settings: its params' ``train`` and its ``max_minutes`` resource (0: no limit);
        see ``multivec.training.safety_net`` for why the net is a resource."""
        return cls.from_dict(join_safety_net(settings, safety_net_minutes))


class TrainingTimeLimitError(RuntimeError):
    """The run went past ``train.max_minutes``; no model was produced."""


class _Interrupted(RuntimeError):
    """Raised by the test hook ``_interrupt_after`` to imitate a killed process."""


def kill_after_step() -> int | None:
    """The step after which the test hook kills this process (``MULTIVEC_KILL_AFTER_STEP``), or None."""
    value = os.environ.get(KILL_AFTER_STEP_ENV)
    if value is None:
        return None
    try:
        step = int(value)
    except ValueError:
        raise ValueError(f"{KILL_AFTER_STEP_ENV}={value!r}: expected a step number (a test hook)") from None
    log.warning("%s=%d: this process will kill itself (SIGKILL) after step %d", KILL_AFTER_STEP_ENV, step, step)
    return step


def seeded_generator(seed: int, *parts: Any) -> torch.Generator:
    """A CPU generator that is a pure function of (seed, parts), e.g. (seed, "epoch", 3) or (seed, "step", 7, 0)."""
    digest = hashlib.sha256(":".join(map(str, (seed, *parts))).encode()).digest()
    return torch.Generator().manual_seed(int.from_bytes(digest[:8], "little") & (2**63 - 1))


def lr_factor(step: int, *, schedule: str, warmup: int, total: int) -> float:
    """Multiplier of the base LR for the step about to be taken (0-based): linear warm-up, then linear or
    cosine decay reaching 0 at ``total``."""
    if warmup and step < warmup:
        return (step + 1) / warmup
    if schedule == "constant":  # no decay (the sub-sentence encoder's App. A.2 segmenter)
        return 1.0
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    if schedule == "cosine":
        return 0.5 * (1.0 + math.cos(math.pi * progress))
    return 1.0 - progress


def is_decayed(name: str, param: torch.Tensor) -> bool:
    """Weight decay applies to matrices and embeddings, not to biases and norm scales (1-D tensors)."""
    return param.ndim >= 2 and not name.endswith(".bias")


def make_optimizer(groups: Sequence[dict[str, Any]], cfg: TrainConfig) -> torch.optim.Optimizer:
    """AdamW over ``groups`` (each ``{"params": [(name, parameter), ...], "lr": lr}``), every group split
    into a weight-decayed and an undecayed part (``is_decayed``); empty parts are dropped."""
    param_groups = []
    for group in groups:
        for decayed in (True, False):
            params = [p for name, p in group["params"] if p.requires_grad and is_decayed(name, p) == decayed]
            if params:
                param_groups.append({"params": params, "lr": group["lr"],
                                     "weight_decay": cfg.weight_decay if decayed else 0.0})
    if not param_groups:
        raise ValueError("the model has no trainable parameters")
    # fused=None (not False): torch's default implementation choice, as before the option existed
    return torch.optim.AdamW(param_groups, fused=True if cfg.fused_optimizer else None)


def make_scheduler(optimizer: torch.optim.Optimizer, cfg: TrainConfig) -> torch.optim.lr_scheduler.LambdaLR:
    def factor(step: int) -> float:
        return lr_factor(step, schedule=cfg.schedule, warmup=cfg.warmup_steps, total=cfg.max_steps)

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


class TrainingTask(ABC):
    """What a model supplies to the engine. ``setup`` must set ``self.model``."""

    name: str = "model"  # progress-bar label
    dev_metrics: tuple[str, ...] = ("dev_loss",)  # metrics.csv columns, in order
    selection_metric: str = "dev_loss"  # the dev metric that picks the best weights
    selection_mode: str = "min"  # "min" | "max"
    throughput_unit: str = "tokens"  # the count ``loss`` returns, per second of step time
    loss_terms: tuple[str, ...] = ()  # parts of the loss ``loss`` may report: metrics.csv columns train_<term>
    find_unused_parameters: bool = False  # DDP: some trainable parameters get no gradient
    model: nn.Module

    @abstractmethod
    def setup(self, out_dir: Path, runtime: Runtime, resuming: bool) -> None:
        """Build ``self.model``. ``resuming``: files an earlier setup wrote into ``out_dir`` may be reused."""

    @abstractmethod
    def run_config(self) -> dict[str, Any]:
        """``{"model": {...}, "derived": {...}}``: every section but ``derived`` must match on resumption."""

    @abstractmethod
    def epoch_batches(self, epoch: int) -> Sequence[Any]:
        """The batch specs of one epoch; a pure function of (seed, epoch)."""

    @abstractmethod
    def make_batch(self, spec: Any, generator: torch.Generator) -> Any:
        """One batch on the model's device; ``generator`` is seeded by (seed, step, micro-batch) for noise."""

    @abstractmethod
    def loss(self, module: nn.Module, batch: Any) -> tuple[torch.Tensor, int]:
        """(scalar loss, throughput count); ``module`` is the model, DDP-wrapped when distributed. A task with
        ``loss_terms`` may return (loss, count, {term: float}) instead: each term is averaged like the loss
        and written as ``train_<term>`` (a term a batch does not report counts as absent, not as 0)."""

    @abstractmethod
    def evaluate(self, runtime: Runtime) -> dict[str, float] | None:
        """Dev metrics (including ``selection_metric``) of ``self.model``; None when there is no dev set."""

    def parameter_groups(self, cfg: TrainConfig) -> list[dict[str, Any]]:
        return [{"params": list(self.model.named_parameters()), "lr": cfg.lr}]

    def save_weights(self, path: Path) -> None:
        """Write the weights atomically (readers never see a half-written file). Default: the model's own
        ``save_weights`` (NuggetModel, SubEncoder)."""
        self.model.save_weights(path)

    def load_weights(self, path: Path) -> None:
        self.model.load_weights(path)

    def save_metadata(self, out_dir: Path, run_config: dict[str, Any]) -> None:
        """Everything besides the weights that loading the trained model needs. Default: the model's own
        ``save_metadata(out_dir, run_config without "model")`` if it has one, else nothing."""
        saver = getattr(self.model, "save_metadata", None)
        if saver is not None:
            saver(out_dir, {k: v for k, v in run_config.items() if k != "model"})


class Trainer:
    """Trains ``task`` with ``cfg`` into ``out_dir``, resuming from ``out_dir/checkpoint`` if present."""

    def __init__(self, task: TrainingTask, cfg: TrainConfig, out_dir: str | Path, runtime: Runtime | None = None):
        self.task, self.cfg, self.out = task, cfg, Path(out_dir)
        self.runtime = runtime or setup_runtime(cfg.device, cfg.precision, cfg.threads)
        self.best_key = f"best_{task.selection_metric}"
        self.columns = metric_columns(task.dev_metrics, task.throughput_unit, task.loss_terms)
        if task.selection_mode not in ("min", "max"):
            raise ValueError(f"{type(task).__name__}.selection_mode={task.selection_mode!r}: expected 'min' or 'max'")

    # -- set-up and resumption ---------------------------------------------------------------------------
    def _initial_state(self) -> dict[str, Any]:
        return {"step": 0, "epoch": 0, "position": 0, "best_step": None, self.best_key: None, "elapsed_s": 0.0,
                "window_loss": 0.0, "window_steps": 0, "window_count": 0, "window_seconds": 0.0, "metrics": [],
                "window_terms": {}}

    def _resume(self, checkpoint: Path, optimizer, scheduler, scaler) -> dict[str, Any]:
        rt = self.runtime
        self.task.load_weights(checkpoint / ckpt.WEIGHTS_FILE)
        saved = ckpt.safe_load(checkpoint / ckpt.OPTIMIZER_FILE, map_location=rt.device)
        optimizer.load_state_dict(saved["optimizer"])
        scheduler.load_state_dict(saved["scheduler"])
        scaler.load_state_dict(saved["scaler"])
        rng_path = checkpoint / ckpt.rng_file(rt.rank)
        if not rng_path.exists():
            raise FileNotFoundError(f"{rng_path} is missing: the checkpoint was written by a run with fewer ranks")
        ckpt.set_rng_state(ckpt.safe_load(rng_path, map_location="cpu"))
        required = tuple(key for key in self._initial_state() if key != "window_terms")  # older checkpoints lack it
        state = ckpt.read_checkpoint_json(checkpoint / ckpt.STATE_FILE, required)
        state.setdefault("window_terms", {})
        if rt.is_main:  # Snakemake removed a killed job's outputs: restore them from the checkpoint
            write_metrics(self.out / METRICS_FILE, self.columns, state["metrics"])
            if (checkpoint / ckpt.BEST_WEIGHTS_FILE).exists():
                shutil.copyfile(checkpoint / ckpt.BEST_WEIGHTS_FILE, self.out / WEIGHTS_FILE)
        log.info("resuming %s from step %d", self.out, state["step"])
        return state

    def _save_checkpoint(self, state, optimizer, scheduler, scaler, run_config) -> None:
        rt = self.runtime
        folder = ckpt.step_folder(self.out, state["step"])
        if rt.is_main:
            ckpt.prepare_folder(folder)
        rt.barrier()
        if not rt.is_main:
            torch.save(ckpt.rng_state(), folder / ckpt.rng_file(rt.rank))
        rt.barrier()
        if rt.is_main:
            ckpt.write_checkpoint(folder, save_weights=self.task.save_weights,
                                  training_state={"optimizer": optimizer.state_dict(),
                                                  "scheduler": scheduler.state_dict(), "scaler": scaler.state_dict()},
                                  state=state, run_config=run_config, best_weights=self.out / WEIGHTS_FILE)
        rt.barrier()

    # -- evaluation ----------------------------------------------------------------------------------------
    def _record_eval(self, state: dict[str, Any]) -> None:
        task = self.task
        metrics = task.evaluate(self.runtime) or {}
        if metrics and task.selection_metric not in metrics:
            raise KeyError(f"{type(task).__name__}.evaluate returned {sorted(metrics)}, "
                           f"without the selection metric {task.selection_metric!r}")
        window = state["window_steps"]
        row = {"step": state["step"], "train_loss": round(state["window_loss"] / window, 6) if window else ""}
        for term in task.loss_terms:  # [sum, count] over the window's micro-batches that reported the term
            total, n = state["window_terms"].get(term, (0.0, 0))
            row[f"train_{term}"] = round(total / n, 6) if n else ""
        row.update({name: round(float(metrics[name]), 6) if name in metrics else "" for name in task.dev_metrics})
        row[self.columns[-2]] = round(state["window_count"] / state["window_seconds"], 1) \
            if state["window_seconds"] else ""
        row["elapsed_s"] = round(state["elapsed_s"], 2)
        state["metrics"].append(row)
        state.update(window_loss=0.0, window_steps=0, window_count=0, window_seconds=0.0, window_terms={})
        write_metrics(self.out / METRICS_FILE, self.columns, state["metrics"])
        value = metrics.get(task.selection_metric)
        best = state[self.best_key]
        better = best is None or (value < best if task.selection_mode == "min" else value > best)
        if value is None or better:  # no dev set: the latest weights are the result
            state[self.best_key], state["best_step"] = (float(value) if value is not None else None), state["step"]
            task.save_weights(self.out / WEIGHTS_FILE)

    def _fail_time_limit(self, state: dict[str, Any]) -> None:
        if self.runtime.is_main:
            (self.out / WEIGHTS_FILE).unlink(missing_ok=True)  # the best weights stay in the checkpoint
        raise TrainingTimeLimitError(
            f"{self.out}: training ran {state['elapsed_s'] / 60:.2f} min and reached only step {state['step']} of "
            f"{self.cfg.max_steps}, past the safety net train.max_minutes={self.cfg.max_minutes}. No model was "
            f"written; raise train.max_minutes (or set it to null) and rerun to resume from step {state['step']}, "
            "or lower train.max_steps.")

    # -- the loop ------------------------------------------------------------------------------------------
    def fit(self, _interrupt_after: int | None = None) -> dict[str, Any]:
        """Train (or resume) to ``max_steps``; returns the training summary.

        ``_interrupt_after`` (tests only): raise ``_Interrupted`` after this many steps of this call, right
        after the step's checkpoint if one is due, as if the process had been killed.
        """
        cfg, rt, task, out = self.cfg, self.runtime, self.task, self.out
        out.mkdir(parents=True, exist_ok=True)
        checkpoint = ckpt.latest_checkpoint(out)
        task.setup(out, rt, resuming=checkpoint is not None)
        model = task.model.to(rt.device)
        if cfg.compile:
            from multivec.training.compilation import compile_repeated_blocks

            compile_repeated_blocks(model)
        base = task.run_config()
        run_config = {**base, "train": cfg.to_dict(),
                      "derived": {**base.get("derived", {}), "world_size": rt.world_size, "device": str(rt.device),
                                  "precision": rt.precision}}
        if checkpoint is not None:
            ckpt.check_same_run(checkpoint, run_config, RESUMABLE_CHANGES)
        if rt.is_main:  # rewritten on resumption too: Snakemake removes a killed job's outputs
            task.save_metadata(out, run_config)

        optimizer = make_optimizer(task.parameter_groups(cfg), cfg)
        scheduler = make_scheduler(optimizer, cfg)
        scaler = torch.amp.GradScaler(rt.device.type, enabled=rt.precision == "fp16")
        trainable = [p for p in model.parameters() if p.requires_grad]
        torch.manual_seed(cfg.seed + rt.rank)  # dropout stream (per rank)
        state = self._initial_state() if checkpoint is None else self._resume(checkpoint, optimizer, scheduler, scaler)

        module: nn.Module = model
        if rt.distributed:
            from torch.nn.parallel import DistributedDataParallel

            module = DistributedDataParallel(model, device_ids=[rt.local_rank] if rt.device.type == "cuda" else None,
                                             find_unused_parameters=task.find_unused_parameters)

        def save() -> None:
            self._save_checkpoint(state, optimizer, scheduler, scaler, run_config)

        from tqdm import tqdm

        progress = tqdm(total=cfg.max_steps, initial=state["step"], desc=f"{task.name} {out.name}", mininterval=5,
                        disable=not rt.is_main, dynamic_ncols=True)
        per_step = rt.world_size * cfg.grad_accumulation  # batches of the shared order consumed per step
        time_cap = cfg.max_minutes * 60 if cfg.max_minutes else None
        clock = time.perf_counter()

        def tick() -> None:  # elapsed_s: wall clock of the loop, evaluations and checkpoints included
            nonlocal clock
            now = time.perf_counter()
            state["elapsed_s"] += now - clock
            clock = now

        steps_this_call = 0
        kill_step = kill_after_step()
        if cfg.eval_at_start and state["step"] == 0 and not state["metrics"] and rt.is_main:
            self._record_eval(state)  # the starting point's dev metrics (row "step 0"); it may stay the best
            tick()
        model.train()
        batches = task.epoch_batches(state["epoch"])
        while state["step"] < cfg.max_steps:
            if state["position"] + per_step > len(batches) - len(batches) % per_step:
                if len(batches) < per_step:
                    raise ValueError(f"an epoch has {len(batches)} batches, fewer than the {per_step} one step needs "
                                     f"({rt.world_size} ranks x {cfg.grad_accumulation} accumulation)")
                state["epoch"] += 1
                state["position"] = 0
                batches = task.epoch_batches(state["epoch"])
                continue
            specs = [batches[state["position"] + micro * rt.world_size + rt.rank]
                     for micro in range(cfg.grad_accumulation)]
            state["position"] += per_step
            state["step"] += 1

            started = time.perf_counter()
            optimizer.zero_grad(set_to_none=True)
            # Losses, counts and terms stay tensors until the step ends: reading one (float, int) waits for the
            # device, which would stall a GPU between micro-batches.
            micro_losses, micro_counts, micro_terms = [], [], []
            for micro, spec in enumerate(specs):
                batch = task.make_batch(spec, seeded_generator(cfg.seed, "step", state["step"], micro))
                last_micro = micro == len(specs) - 1
                sync = module.no_sync() if rt.distributed and not last_micro else contextlib.nullcontext()
                with sync:
                    with rt.autocast():
                        loss, n, *terms = task.loss(module, batch)
                    scaler.scale(loss / cfg.grad_accumulation).backward()
                micro_losses.append(loss.detach())
                micro_counts.append(n)
                micro_terms.append(terms[0] if terms else {})
                for term in micro_terms[-1]:
                    if term not in task.loss_terms:
                        raise KeyError(f"{type(task).__name__}.loss reported term {term!r}, not one of its "
                                       f"loss_terms {task.loss_terms}")
            if cfg.grad_clip:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(trainable, cfg.grad_clip)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            loss_sum, count = 0.0, 0  # summed in micro-batch order, as Python floats: the same bytes as before
            for loss, n, micro_term in zip(micro_losses, micro_counts, micro_terms):
                loss_sum += float(loss)
                count += int(n)
                for term, value in micro_term.items():
                    total, seen = state["window_terms"].get(term, (0.0, 0))
                    state["window_terms"][term] = (total + float(value), seen + 1)
            loss_sum, count = rt.sum_over_ranks(loss_sum, count)  # every rank sees the same loss: all stop together
            loss_value = loss_sum / per_step
            if not math.isfinite(loss_value):
                raise FloatingPointError(f"{out}: training loss is {loss_value} at step {state['step']}")

            state["window_seconds"] += time.perf_counter() - started  # step time only: the throughput figure
            state["window_loss"] += loss_value
            state["window_steps"] += 1
            state["window_count"] += int(count)
            progress.update(1)
            progress.set_postfix(loss=f"{loss_value:.3f}", refresh=False)
            steps_this_call += 1

            tick()
            last = state["step"] >= cfg.max_steps
            if rt.is_main and (state["step"] % cfg.eval_every == 0 or last):
                self._record_eval(state)
                tick()
            saved = state["step"] % cfg.checkpoint_every == 0 or last
            if saved:
                save()
            rt.barrier()
            if not last and time_cap is not None and rt.any_rank(state["elapsed_s"] >= time_cap):
                progress.close()
                if not saved:  # keep the progress: raising max_minutes and rerunning resumes from here
                    save()
                self._fail_time_limit(state)
            if state["step"] == kill_step:
                os.kill(os.getpid(), signal.SIGKILL)
            if _interrupt_after is not None and steps_this_call >= _interrupt_after:
                progress.close()
                raise _Interrupted(f"interrupted after step {state['step']}")
        progress.close()

        summary = {"train_steps": state["step"], "train_minutes": round(state["elapsed_s"] / 60, 3),
                   "best_step": state["best_step"], self.best_key: state[self.best_key], "stopped_by": "max_steps",
                   "max_steps": cfg.max_steps, "max_minutes": cfg.max_minutes}
        if rt.is_main:
            if not (out / WEIGHTS_FILE).exists():  # no evaluation ever ran in this folder
                task.save_weights(out / WEIGHTS_FILE)
            write_json(out / SUMMARY_FILE, summary)
        rt.barrier()
        # Only rank 0 evaluates; the other ranks report its summary.
        return summary if rt.is_main else read_json(out / SUMMARY_FILE)


def train_task(task: TrainingTask, cfg: TrainConfig, out_dir: str | Path, *,
               _interrupt_after: int | None = None) -> dict[str, Any]:
    """Set up the runtime (device, precision, torchrun) and train ``task``: the one entry point."""
    return Trainer(task, cfg, out_dir).fit(_interrupt_after)
