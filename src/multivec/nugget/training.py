"""Training the NUGGET encoder-decoder (paper §4: AE and MT objectives, token cross-entropy, AdamW 5e-5).

``train(model_config, train_config, train_path, dev_path, out_dir)`` trains on JSONL rows
``{"id", "source", "target"}`` and writes into ``out_dir``:
``model.safetensors`` (best dev loss), ``config.json``, ``backbone/``, ``source_tokenizer/``,
``target_tokenizer/``, ``metrics.csv``, ``training_summary.json`` and ``checkpoint/`` (last state).

Resumption: a checkpoint holds the weights, optimizer and scheduler, every RNG state, the step and
the position in the data order (epoch, batch). The data order and the deletion noise are pure
functions of (seed, epoch) and (seed, step), so on CPU a resumed run ends with exactly the weights and
metrics of an uninterrupted one. Checkpoints are written to a fresh folder and published by an atomic
rename of ``checkpoint/latest.json``; a kill at any moment leaves the previous checkpoint usable.

Multi-GPU: launched by ``torchrun`` (``WORLD_SIZE > 1``), each rank trains on every WORLD_SIZE-th
batch under DistributedDataParallel; rank 0 evaluates and writes files.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import logging
import math
import os
import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import torch

from multivec.io import MalformedInputError, read_json, read_jsonl, write_json
from multivec.nugget.configuration import NuggetConfig, _from_dict
from multivec.nugget.modeling import WEIGHTS_FILE, NuggetModel
from multivec.nugget.target_tokenizer import TargetTokenizer

log = logging.getLogger(__name__)

CHECKPOINT_DIR = "checkpoint"
LATEST_FILE = "latest.json"
METRICS_FILE = "metrics.csv"
RUN_CONFIG_FILE = "run_config.json"
BEST_WEIGHTS_FILE = "best.safetensors"
SUMMARY_FILE = "training_summary.json"
METRIC_COLUMNS = ["step", "train_loss", "dev_loss", "tokens_per_s", "elapsed_s"]
# Train-config keys that may differ when a run is resumed (they do not change the arithmetic).
RESUMABLE_CHANGES = {"max_minutes", "threads", "device"}
LENGTH_POOL_BATCHES = 50  # length-sorted batching sorts within pools of this many batches


@dataclass
class TrainConfig:
    max_steps: int = 1000
    batch_size: int = 16
    lr: float = 5e-5  # paper's learning rate, for pretrained parameters
    lr_scratch: float | None = None  # parameters trained from scratch (scorer, e^n/e^o, W^V, demo decoder); None: lr
    warmup_steps: int = 0  # linear warm-up, then linear decay to 0 at max_steps
    weight_decay: float = 0.0
    grad_clip: float = 1.0
    eval_every: int = 100
    checkpoint_every: int = 100
    seed: int = 0
    threads: int | None = None  # torch intra-op threads; None leaves torch's default
    device: str = "auto"  # "auto" | "cpu" | "cuda"
    bf16: bool = True  # bf16 autocast; applies on CUDA only
    length_sorted: bool = True  # batches of similar source length (within pools of 50 batches)
    dev_batch_size: int | None = None  # None: batch_size
    max_minutes: float | None = None  # wall-clock cap over all (resumed) runs; recorded as stopped_by

    def __post_init__(self) -> None:
        for key in ("max_steps", "batch_size", "eval_every", "checkpoint_every"):
            if getattr(self, key) < 1:
                raise ValueError(f"TrainConfig.{key}={getattr(self, key)!r}: must be >= 1")
        if self.device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"TrainConfig.device={self.device!r}: expected 'auto', 'cpu' or 'cuda'")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TrainConfig":
        return _from_dict(cls, data, "TrainConfig")


class _Interrupted(RuntimeError):
    """Raised by the test hook ``_interrupt_after`` to imitate a killed process."""


# -- data ------------------------------------------------------------------------------------------
def read_pairs(path: str | os.PathLike) -> list[dict[str, str]]:
    rows = read_jsonl(path)
    for number, row in enumerate(rows, start=1):
        for key in ("id", "source", "target"):
            if not isinstance(row.get(key), str):
                raise MalformedInputError(path, None, f"row {number}: field {key!r} missing or not a string")
        if not row["source"].strip() or not row["target"].strip():
            raise MalformedInputError(path, None, f"row {number} (id {row['id']!r}): empty source or target")
    if not rows:
        raise MalformedInputError(path, None, "no rows")
    return rows


@dataclass
class TokenizedPairs:
    sources: list[list[int]]
    targets: list[list[int]]


def tokenize_pairs(model: NuggetModel, rows: Sequence[dict[str, str]]) -> TokenizedPairs:
    cfg = model.config
    return TokenizedPairs(model.tokenize_sources([r["source"] for r in rows], cfg.max_source_tokens),
                          model.target_tokenizer.encode([r["target"] for r in rows], cfg.max_target_tokens))


def delete_tokens(ids: Sequence[int], probability: float, special_ids: set[int],
                  generator: torch.Generator) -> list[int]:
    """Deletion noise (TSDAE): drop each non-special token with ``probability``, keeping at least one."""
    content = [i for i, t in enumerate(ids) if t not in special_ids]
    if probability <= 0 or not content:
        return list(ids)
    draws = torch.rand(len(content), generator=generator).tolist()
    dropped = {content[j] for j, u in enumerate(draws) if u < probability}
    if len(dropped) == len(content):
        dropped.discard(content[int(torch.randint(len(content), (1,), generator=generator))])
    return [t for i, t in enumerate(ids) if i not in dropped]


def epoch_batches(lengths: Sequence[int], batch_size: int, seed: int, epoch: int,
                  length_sorted: bool) -> list[list[int]]:
    """The batches of one epoch, a pure function of (seed, epoch): resumption recomputes it."""
    generator = torch.Generator().manual_seed(seed * 100_003 + epoch)
    order = torch.randperm(len(lengths), generator=generator).tolist()
    if not length_sorted:
        return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    pool = batch_size * LENGTH_POOL_BATCHES
    batches = []
    for start in range(0, len(order), pool):
        chunk = sorted(order[start:start + pool], key=lambda i: lengths[i])
        batches += [chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size)]
    shuffle = torch.randperm(len(batches), generator=generator).tolist()
    return [batches[i] for i in shuffle]


def make_batch(model: NuggetModel, data: TokenizedPairs, rows: Sequence[int], noise_generator: torch.Generator | None):
    sources = [data.sources[i] for i in rows]
    if noise_generator is not None and model.config.noise_deletion > 0:
        special = set(model.source_tokenizer.all_special_ids)
        sources = [delete_tokens(s, model.config.noise_deletion, special, noise_generator) for s in sources]
    input_ids, attention_mask = model.collate_sources(sources)
    decoder_input_ids, labels = model.target_batch([data.targets[i] for i in rows])
    return input_ids, attention_mask, decoder_input_ids, labels


def _step_noise(seed: int, step: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed * 1_000_003 + step)


# -- state on disk -----------------------------------------------------------------------------------
def _rng_state() -> dict[str, Any]:
    state = {"torch": torch.get_rng_state(), "python": random.getstate(), "numpy": np.random.get_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _write_metrics(path: Path, rows: list[dict[str, Any]]) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=METRIC_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    _atomic_write_text(path, buffer.getvalue())


def save_checkpoint(out_dir: Path, model: NuggetModel, optimizer, scheduler, state: dict[str, Any],
                    run_config: dict[str, Any]) -> None:
    """Everything a resumed run needs, inside ``checkpoint/``: Snakemake deletes a killed job's declared
    outputs (model.safetensors, config.json, metrics.csv) before rerunning it, so the checkpoint also
    keeps the run's config and the best weights so far."""
    root = out_dir / CHECKPOINT_DIR
    name = f"step_{state['step']:08d}"
    folder = root / name
    if folder.exists():  # left by a run killed while writing it
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    model.save_weights(folder / WEIGHTS_FILE)
    torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()}, folder / "optimizer.pt")
    torch.save(_rng_state(), folder / "rng.pt")
    write_json(folder / "state.json", state)
    write_json(folder / RUN_CONFIG_FILE, run_config)
    if (out_dir / WEIGHTS_FILE).exists():
        shutil.copyfile(out_dir / WEIGHTS_FILE, folder / BEST_WEIGHTS_FILE)
    _atomic_write_text(root / LATEST_FILE, f'{{"folder": "{name}"}}\n')  # the publication point
    for other in root.iterdir():
        if other.is_dir() and other.name != name:
            shutil.rmtree(other)


def latest_checkpoint(out_dir: Path) -> Path | None:
    pointer = out_dir / CHECKPOINT_DIR / LATEST_FILE
    if not pointer.exists():
        return None
    folder = out_dir / CHECKPOINT_DIR / read_json(pointer)["folder"]
    if not folder.is_dir():
        raise FileNotFoundError(f"{pointer} names {folder}, which does not exist")
    return folder


def _check_same_run(checkpoint: Path, expected: dict[str, Any]) -> None:
    saved = read_json(checkpoint / RUN_CONFIG_FILE)
    differences = [f"model.{k}" for k in expected["model"] if saved["model"].get(k) != expected["model"][k]]
    differences += [f"train.{k}" for k in expected["train"]
                    if k not in RESUMABLE_CHANGES and saved["train"].get(k) != expected["train"][k]]
    if differences:
        raise ValueError(f"{checkpoint} is a checkpoint of a different run (differs in {', '.join(differences)}); "
                         "use a new output folder or delete the old one")


# -- the loop ------------------------------------------------------------------------------------------
def _learning_rate_factor(step: int, warmup: int, total: int) -> float:
    if warmup and step < warmup:
        return (step + 1) / warmup
    return max(0.0, (total - step) / max(1, total - warmup))


def _make_optimizer(model: NuggetModel, cfg: TrainConfig):
    scratch_names = model.new_parameter_names()
    pretrained, scratch = [], []
    for name, param in model.named_parameters():
        if param.requires_grad:
            (scratch if name in scratch_names else pretrained).append(param)
    groups = [{"params": g, "lr": lr} for g, lr in ((pretrained, cfg.lr), (scratch, cfg.lr_scratch or cfg.lr)) if g]
    optimizer = torch.optim.AdamW(groups, weight_decay=cfg.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: _learning_rate_factor(step, cfg.warmup_steps, cfg.max_steps))
    return optimizer, scheduler


def evaluate(model: NuggetModel, data: TokenizedPairs, batch_size: int, seed: int, autocast) -> float:
    """Token-weighted dev loss. Deletion noise (if any) is drawn from a fixed seed: same noise every time."""
    was_training = model.training
    model.eval()
    noise = _step_noise(seed, -1)
    order = sorted(range(len(data.sources)), key=lambda i: len(data.sources[i]))
    total, count = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            batch = make_batch(model, data, order[start:start + batch_size], noise)
            tokens = int((batch[3] != -100).sum())
            with autocast():
                total += float(model(*batch)) * tokens
            count += tokens
    model.train(was_training)
    return total / max(count, 1)


def _resolve_device(cfg: TrainConfig, local_rank: int) -> torch.device:
    if cfg.device == "cpu" or (cfg.device == "auto" and not torch.cuda.is_available()):
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise RuntimeError("TrainConfig.device='cuda' but CUDA is not available")
    return torch.device("cuda", local_rank)


def train(model_config: NuggetConfig, train_config: TrainConfig, train_path: str | os.PathLike,
          dev_path: str | os.PathLike | None, out_dir: str | os.PathLike, *,
          _interrupt_after: int | None = None) -> dict[str, Any]:
    """Train (or resume training) and return the training summary.

    ``_interrupt_after`` (tests only): raise after this many steps of this call, right after the
    step's checkpoint if one is due, as if the process had been killed.
    """
    import torch.distributed as dist

    cfg = train_config
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    distributed = world > 1
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = _resolve_device(cfg, local_rank)
    if distributed and not dist.is_initialized():
        if device.type == "cuda":
            torch.cuda.set_device(device)
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    rank = dist.get_rank() if distributed else 0
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    use_bf16 = cfg.bf16 and device.type == "cuda"
    if cfg.bf16 and not use_bf16:
        log.info("bf16 autocast applies to CUDA only; training in float32 on %s", device)

    def autocast():
        return torch.autocast(device.type, dtype=torch.bfloat16, enabled=use_bf16)

    def barrier():
        if distributed:
            dist.barrier()

    train_rows = read_pairs(train_path)
    dev_rows = read_pairs(dev_path) if dev_path is not None else None
    checkpoint = latest_checkpoint(out)

    # Target vocabulary: trained once on the training targets, reloaded on resumption and by other ranks.
    target_tokenizer = None
    if model_config.target_tokenizer == "bpe":
        saved = out / "target_tokenizer"
        if checkpoint is None and rank == 0:
            TargetTokenizer.train_bpe([r["target"] for r in train_rows], model_config.target_vocab_size).save(saved)
        barrier()
        target_tokenizer = TargetTokenizer.load(saved)
    model = NuggetModel.from_backbone(model_config, target_tokenizer)
    model.to(device)

    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    run_config = {"model": model_config.to_dict(), "train": cfg.to_dict(),
                  "derived": {"encoder_layers": model.encoder.num_layers, "hidden_size": model.encoder.hidden_size,
                              "frozen_layers": model_config.scorer_layer, "frozen_parameters": frozen,
                              "trainable_parameters": trainable,
                              "target_vocab_size": model.target_tokenizer.vocab_size,
                              "decoder_start_id": model.target_tokenizer.eos_id,
                              "target_prefix_ids": model.target_tokenizer.prefix_ids,
                              "world_size": world, "device": str(device), "bf16": use_bf16,
                              "train_rows": len(train_rows), "dev_rows": len(dev_rows) if dev_rows else 0}}
    log.info("%s: %d trainable and %d frozen parameters on %s (world size %d)", out, trainable, frozen, device, world)
    if checkpoint is not None:
        _check_same_run(checkpoint, run_config)
    if rank == 0:  # rewritten on resumption too: Snakemake removes a killed job's outputs
        model.save_metadata(out, {k: v for k, v in run_config.items() if k != "model"})

    train_data = tokenize_pairs(model, train_rows)
    dev_data = tokenize_pairs(model, dev_rows) if dev_rows else None
    optimizer, scheduler = _make_optimizer(model, cfg)

    state: dict[str, Any] = {"step": 0, "epoch": 0, "position": 0, "best_dev_loss": None, "best_step": None,
                             "elapsed_s": 0.0, "window_loss": 0.0, "window_steps": 0, "window_tokens": 0,
                             "window_seconds": 0.0, "metrics": [], "stopped_by": None}
    torch.manual_seed(cfg.seed + rank)  # dropout stream (per rank)
    if checkpoint is not None:
        model.load_weights(checkpoint / WEIGHTS_FILE)
        saved_optim = torch.load(checkpoint / "optimizer.pt", map_location=device, weights_only=False)
        optimizer.load_state_dict(saved_optim["optimizer"])
        scheduler.load_state_dict(saved_optim["scheduler"])
        _set_rng_state(torch.load(checkpoint / "rng.pt", weights_only=False))
        state = read_json(checkpoint / "state.json")
        state["stopped_by"] = None  # a time cap is re-checked below (max_minutes may have been raised)
        if rank == 0:
            _write_metrics(out / METRICS_FILE, state["metrics"])
            if (checkpoint / BEST_WEIGHTS_FILE).exists():
                shutil.copyfile(checkpoint / BEST_WEIGHTS_FILE, out / WEIGHTS_FILE)
        log.info("resuming %s from step %d", out, state["step"])

    trainer: Callable = model
    if distributed:
        from torch.nn.parallel import DistributedDataParallel

        # Without a residual the scorer takes no part in the loss; DDP must be told.
        unused = model.scorer is not None and not model_config.residual
        trainer = DistributedDataParallel(model, device_ids=[local_rank] if device.type == "cuda" else None,
                                          find_unused_parameters=unused)

    def stop_everywhere(flag: bool) -> bool:
        if not distributed:
            return flag
        tensor = torch.tensor([int(flag)], device=device)
        dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
        return bool(tensor.item())

    def record_eval() -> None:
        dev_loss = evaluate(model, dev_data, cfg.dev_batch_size or cfg.batch_size, cfg.seed, autocast) \
            if dev_data is not None else None
        window = state["window_steps"]
        state["metrics"].append({
            "step": state["step"],
            "train_loss": round(state["window_loss"] / window, 6) if window else "",
            "dev_loss": round(dev_loss, 6) if dev_loss is not None else "",
            "tokens_per_s": round(state["window_tokens"] / state["window_seconds"], 1) if state["window_seconds"] else "",
            "elapsed_s": round(state["elapsed_s"], 2)})
        state.update(window_loss=0.0, window_steps=0, window_tokens=0, window_seconds=0.0)
        _write_metrics(out / METRICS_FILE, state["metrics"])
        # No dev set: the latest weights are the result.
        if dev_loss is None or state["best_dev_loss"] is None or dev_loss < state["best_dev_loss"]:
            state["best_dev_loss"], state["best_step"] = dev_loss, state["step"]
            model.save_weights(out / WEIGHTS_FILE)

    clock = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        state["elapsed_s"] += now - clock[0]
        clock[0] = now

    model.train()
    steps_this_call = 0
    time_cap = cfg.max_minutes * 60 if cfg.max_minutes else None
    from tqdm import tqdm

    progress = tqdm(total=cfg.max_steps, initial=state["step"], desc=f"nugget {out.name}", mininterval=5,
                    disable=rank != 0, dynamic_ncols=True)
    batches = epoch_batches([len(s) for s in train_data.sources], cfg.batch_size, cfg.seed, state["epoch"],
                            cfg.length_sorted)
    while state["step"] < cfg.max_steps and state["stopped_by"] is None:
        if time_cap is not None and stop_everywhere(state["elapsed_s"] >= time_cap):
            state["stopped_by"] = "max_minutes"
            break
        usable = len(batches) - len(batches) % world if distributed else len(batches)
        if state["position"] + world > usable:
            state["epoch"] += 1
            state["position"] = 0
            batches = epoch_batches([len(s) for s in train_data.sources], cfg.batch_size, cfg.seed, state["epoch"],
                                    cfg.length_sorted)
            if len(batches) < world:
                raise ValueError(f"{len(batches)} batches per epoch cannot feed {world} ranks")
            continue
        rows = batches[state["position"] + rank]
        state["position"] += world
        state["step"] += 1

        started = time.perf_counter()
        batch = make_batch(model, train_data, rows, _step_noise(cfg.seed, state["step"]))
        with autocast():
            loss = trainer(*batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.grad_clip:
            torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], cfg.grad_clip)
        optimizer.step()
        scheduler.step()
        finished = time.perf_counter()
        loss_value = float(loss.detach())
        if not math.isfinite(loss_value):
            raise FloatingPointError(f"training loss is {loss_value} at step {state['step']}")

        state["window_seconds"] += finished - started  # step time only: the tokens/s figure
        state["window_loss"] += loss_value
        state["window_steps"] += 1
        state["window_tokens"] += int(batch[1].sum())
        progress.update(1)
        progress.set_postfix(loss=f"{loss_value:.3f}", refresh=False)
        steps_this_call += 1

        tick()  # elapsed_s: wall-clock of the loop, evaluation and checkpoints included
        out_of_time = time_cap is not None and stop_everywhere(state["elapsed_s"] >= time_cap)
        last = state["step"] >= cfg.max_steps or out_of_time
        if out_of_time:
            state["stopped_by"] = "max_minutes"
        if rank == 0 and (state["step"] % cfg.eval_every == 0 or last):
            record_eval()
            tick()
        if rank == 0 and (state["step"] % cfg.checkpoint_every == 0 or last):
            save_checkpoint(out, model, optimizer, scheduler, state, run_config)
        barrier()
        if _interrupt_after is not None and steps_this_call >= _interrupt_after:
            progress.close()
            raise _Interrupted(f"interrupted after step {state['step']}")
    progress.close()

    summary = {"train_steps": state["step"], "train_minutes": round(state["elapsed_s"] / 60, 3),
               "best_step": state["best_step"], "best_dev_loss": state["best_dev_loss"],
               "stopped_by": state["stopped_by"] or "max_steps", "max_steps": cfg.max_steps,
               "max_minutes": cfg.max_minutes}
    if rank == 0:
        if not (out / WEIGHTS_FILE).exists():  # stopped before any evaluation (e.g. max_minutes already spent)
            model.save_weights(out / WEIGHTS_FILE)
        write_json(out / SUMMARY_FILE, summary)
    barrier()
    # Only rank 0 evaluates; the other ranks report its summary.
    return summary if rank == 0 else read_json(out / SUMMARY_FILE)
