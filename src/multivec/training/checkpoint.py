"""Resumable training state on disk: atomic checkpoints, safe loading, the same-run check.

Layout inside ``<out>/checkpoint/``:
``step_XXXXXXXX/`` holds ``model.safetensors`` (weights now), ``best.safetensors`` (best-by-dev weights so
far), ``optimizer.pt`` (optimizer, LR schedule and grad-scaler state), ``rng.pt`` (rank 0's torch and CUDA
generator states; ``rng.rank<r>.pt`` for the other ranks), ``state.json`` (step, data position, metrics, best so far) and
``run_config.json``. ``latest.json`` names the complete folder; it is replaced atomically after the folder
is written, so a kill at any moment leaves the previous checkpoint usable. The run config and best weights
live here because Snakemake deletes a killed job's declared outputs before rerunning it.

Everything is loaded without executing code: ``.pt`` files with ``torch.load(weights_only=True)``, RNG
states stored as tensors, ints and lists; a file that needs arbitrary unpickling is refused.

Only torch's generators are checkpointed: nothing in training draws from Python's ``random`` or NumPy's
global generator (``multivec.training.engine`` says why), so their states are neither saved nor restored.
Checkpoints written before this also hold ``"python"`` and ``"numpy"`` entries; they load, and those
entries are ignored.
"""

from __future__ import annotations

import os
import pickle
import shutil
from pathlib import Path
from typing import Any

import torch

from multivec.io import read_json, write_json

CHECKPOINT_DIR = "checkpoint"
LATEST_FILE = "latest.json"
STATE_FILE = "state.json"
RUN_CONFIG_FILE = "run_config.json"
OPTIMIZER_FILE = "optimizer.pt"
WEIGHTS_FILE = "model.safetensors"
BEST_WEIGHTS_FILE = "best.safetensors"


class UnsafeCheckpointError(RuntimeError):
    """A checkpoint file holds more than tensors and plain values; it was not unpickled."""


def atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def safe_load(path: Path, map_location=None) -> Any:
    """``torch.load`` restricted to tensors and plain containers (no code runs while loading)."""
    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as error:
        raise UnsafeCheckpointError(
            f"{path}: refused to load: it holds objects other than tensors and plain values, and unpickling "
            f"them could run code. Delete {path.parent} if you did not write it. ({str(error).splitlines()[0]})"
        ) from None


def rng_file(rank: int) -> str:
    return "rng.pt" if rank == 0 else f"rng.rank{rank}.pt"


# The keys of rng.pt that are restored. Older checkpoints also hold "python" and "numpy" (ignored).
RNG_KEYS = ("torch", "cuda")


def rng_state() -> dict[str, Any]:
    """The torch CPU generator's state, and the CUDA generators' where CUDA is available, as tensors
    (``weights_only``-safe): the only generators training draws from (``multivec.training.engine``)."""
    state = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore what ``rng_state`` saved. Python's ``random`` and NumPy's global generator are left alone,
    also when an older checkpoint holds their states."""
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def read_checkpoint_json(path: Path, required: tuple[str, ...] = ()) -> dict[str, Any]:
    """A JSON object of a checkpoint; a missing, unreadable or incomplete file is an error naming it."""
    try:
        data = read_json(path)
    except (OSError, ValueError) as error:
        raise ValueError(f"{path}: not a readable checkpoint file ({error}); delete {path.parent} to start over") \
            from None
    missing = [key for key in required if not isinstance(data, dict) or key not in data]
    if missing:
        raise ValueError(f"{path}: checkpoint file lacks {', '.join(missing)}; delete {path.parent} to start over")
    return data


def latest_checkpoint(out_dir: Path) -> Path | None:
    """The folder ``checkpoint/latest.json`` names, or None when there is no checkpoint."""
    pointer = Path(out_dir) / CHECKPOINT_DIR / LATEST_FILE
    if not pointer.exists():
        return None
    name = read_checkpoint_json(pointer, ("folder",))["folder"]
    folder = pointer.parent / str(name)
    if not isinstance(name, str) or "/" in name or not folder.is_dir():
        raise FileNotFoundError(f"{pointer} names {name!r}, which is not a checkpoint folder next to it")
    return folder


def step_folder(out_dir: Path, step: int) -> Path:
    return Path(out_dir) / CHECKPOINT_DIR / f"step_{step:08d}"


def prepare_folder(folder: Path) -> None:
    """A fresh, empty step folder (a leftover of a run killed while writing it is removed)."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)


def write_checkpoint(folder: Path, *, save_weights, training_state: dict[str, Any], state: dict[str, Any],
                     run_config: dict[str, Any], best_weights: Path | None) -> None:
    """Write rank 0's files into ``folder`` (other ranks' RNG files are already there), then publish it."""
    save_weights(folder / WEIGHTS_FILE)
    torch.save(training_state, folder / OPTIMIZER_FILE)
    torch.save(rng_state(), folder / rng_file(0))
    write_json(folder / STATE_FILE, state)
    write_json(folder / RUN_CONFIG_FILE, run_config)
    if best_weights is not None and best_weights.exists():
        shutil.copyfile(best_weights, folder / BEST_WEIGHTS_FILE)
    root = folder.parent
    atomic_write_text(root / LATEST_FILE, f'{{"folder": "{folder.name}"}}\n')  # the publication point
    for other in root.iterdir():
        if other.is_dir() and other.name != folder.name:
            shutil.rmtree(other)


def check_same_run(checkpoint: Path, expected: dict[str, Any], resumable: set[str]) -> None:
    """Refuse to resume a checkpoint written with another configuration.

    Every section of ``expected`` except ``derived`` must match; ``train`` keys in ``resumable`` may change.
    """
    saved = read_checkpoint_json(checkpoint / RUN_CONFIG_FILE)
    differences = []
    for section, values in expected.items():
        if section == "derived":
            continue
        old = saved.get(section, {})
        differences += [f"{section}.{key}" for key in sorted(set(values) | set(old))
                        if not (section == "train" and key in resumable) and old.get(key) != values.get(key)]
    if differences:
        raise ValueError(f"{checkpoint} is a checkpoint of a different run (differs in {', '.join(differences)}); "
                         "use a new output folder or delete the old one")
