"""Sanity gates of trained NUGGET/TSDAE models: a model that has not learned is named, never used
silently.

- **Every trained model**: its best dev loss (``training_summary.json``) must be below the unigram entropy of
  its dev targets (``config.json`` → ``derived.unigram_nats``, ``multivec.nugget.training.unigram_nats``): a
  decoder worse than a unigram model has not learned to read its nuggets (measured before the decoder's fixes: 7.0 vs
  5.4 nats per token after 120 steps).
- **The shared r = 1 model** (``bottleneck: tokens``, the zoo's ``base_r1``): it must also reconstruct the
  first AE dev documents at corpus BLEU >= ``min_bleu`` (0.9; the paper's mBART-initialised AE models reach
  above 0.99 for r >= 0.1), scored by Fig. 4's ``reconstruct``. An MT base translates, so its BLEU is
  reported, not gated.
A missed gate is a warning in the build log and a ``gate`` cell (and a note) in the tables; with
``strict: true`` the gate rule fails instead.
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path
from typing import Any, Iterable

from multivec.io import read_json

log = logging.getLogger(__name__)

GATE_COLUMNS = ["best_dev_loss", "unigram_nats", "gate"]
PASSED = "ok"


class GateError(RuntimeError):
    """A model missed a sanity gate and the config asked the build to stop (``strict: true``)."""


def dev_loss_gate(model_dir: str | os.PathLike) -> dict[str, Any]:
    """``{best_dev_loss, unigram_nats, below_unigram, gate}`` of one trained model folder."""
    folder = Path(model_dir)
    summary, config = read_json(folder / "training_summary.json"), read_json(folder / "config.json")
    best = summary.get("best_dev_loss")
    unigram = config.get("derived", {}).get("unigram_nats")
    if unigram is None:
        raise ValueError(f"{folder / 'config.json'}: no derived.unigram_nats (trained without a dev set, or by an "
                         "older version): retrain the model")
    if best is None or not math.isfinite(best):
        raise ValueError(f"{folder / 'training_summary.json'}: best_dev_loss is {best!r}")
    below = best < unigram
    gate = PASSED if below else f"FAILED: best dev loss {best:.3f} >= unigram {unigram:.3f} nats/token"
    return {"best_dev_loss": best, "unigram_nats": unigram, "below_unigram": below, "gate": gate}


def checked_models(model_dirs: dict[str, str | os.PathLike]) -> dict[str, dict[str, Any]]:
    """``dev_loss_gate`` of every named model folder; each failure is logged as a warning naming the folder."""
    gates = {}
    for name, folder in model_dirs.items():
        gates[name] = dev_loss_gate(folder)
        if not gates[name]["below_unigram"]:
            log.warning("sanity gate: %s (%s) %s", name, folder, gates[name]["gate"])
    return gates


def base_gate(model_dir: str | os.PathLike, dev_path: str | os.PathLike, objective: str, *, min_bleu: float,
              documents: int | None, num_beams: int, batch_size: int, strict: bool = False) -> dict[str, Any]:
    """Both gates of the shared r = 1 model: reconstruction BLEU (AE only) and dev loss below unigram."""
    from multivec.nugget.analysis.reconstruction_bleu import dev_documents, reconstruct
    from multivec.nugget.modeling import NuggetModel
    from multivec.io.resources import default_device

    model = NuggetModel.from_pretrained(model_dir, device=default_device())
    if model.config.bottleneck != "tokens":
        raise ValueError(f"{model_dir}: bottleneck {model.config.bottleneck!r}, not the r = 1 'tokens' model")
    rows = dev_documents(dev_path, objective, documents)
    _, summary = reconstruct(model, rows, objective, num_beams=num_beams, batch_size=batch_size)
    loss = dev_loss_gate(model_dir)
    bleu = float(summary["bleu_unit"])
    bleu_ok = objective != "ae" or bleu >= min_bleu
    failures = ([] if bleu_ok else [f"BLEU {bleu:.3f} < {min_bleu}"]) + (
        [] if loss["below_unigram"] else [loss["gate"].removeprefix("FAILED: ")])
    passes = not failures
    message = (f"shared r = 1 {objective.upper()} model {model_dir}: BLEU {bleu:.3f} on {len(rows)} dev documents"
               f"{' (gate >= ' + str(min_bleu) + ')' if objective == 'ae' else ' (translation: not gated)'}, best "
               f"dev loss {loss['best_dev_loss']:.3f} vs unigram {loss['unigram_nats']:.3f} nats/token: "
               + ("passes" if passes else "FAILED (" + "; ".join(failures) + ")"))
    if strict and not passes:
        raise GateError(message + "; nugget_base.gate.strict is true")
    return {"model": str(model_dir), "objective": objective, "bleu": bleu, "min_bleu": min_bleu if objective == "ae"
            else None, "documents": len(rows), **{k: loss[k] for k in ("best_dev_loss", "unigram_nats")},
            "passes": passes, "gate": PASSED if passes else "FAILED: " + "; ".join(failures), "message": message}


def gate_notes(gates: dict[str, dict[str, Any]], bases: Iterable[dict[str, Any]] = ()) -> list[str]:
    """Markdown lines for a table: each failed model by name, and the shared models' gates."""
    lines = []
    failed = [f"`{name}` ({g['gate'].removeprefix('FAILED: ')})" for name, g in gates.items() if g["gate"] != PASSED]
    if failed:
        lines.append("**Sanity gate missed** (best dev loss not below the unigram entropy of its targets; its "
                     "numbers are shown but describe a model that has not learned): " + ", ".join(failed) + ".")
    elif gates:
        lines.append("Sanity gate: every trained row's best dev loss is below the unigram entropy of its dev "
                     "targets (columns best_dev_loss, unigram_nats).")
    for base in bases:
        lines.append(("Shared r = 1 starting model: " if base["passes"] else "**Shared r = 1 starting model FAILED "
                      "its gate**: ") + base["message"] + ".")
    return lines
