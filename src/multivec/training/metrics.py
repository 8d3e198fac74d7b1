"""The metrics CSV every training run writes (``metrics.csv``): one row per evaluation.

Columns: ``step``, ``train_loss`` (mean over the steps since the previous row, and over micro-batches and
ranks), ``train_<term>`` for each part of the loss the task reports (mean over this rank's micro-batches that
reported it), the model's dev metrics, ``<unit>_per_s`` (all ranks' throughput over rank 0's step time) and
``elapsed_s`` (wall clock of the loop, evaluations and checkpoints included, summed over resumed runs). The last two depend on the machine; the others do not.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any, Sequence

from multivec.training.checkpoint import atomic_write_text

METRICS_FILE = "metrics.csv"


def metric_columns(dev_metrics: Sequence[str], throughput_unit: str, loss_terms: Sequence[str] = ()) -> list[str]:
    """``loss_terms``: the parts of the training loss a task reports, as ``train_<term>`` after ``train_loss``."""
    return ["step", "train_loss", *(f"train_{t}" for t in loss_terms), *dev_metrics, f"{throughput_unit}_per_s",
            "elapsed_s"]


def write_metrics(path: Path, columns: Sequence[str], rows: list[dict[str, Any]]) -> None:
    """Rewrite the whole file atomically (rows come from the checkpointed state, so resumption restores it)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write_text(Path(path), buffer.getvalue())
