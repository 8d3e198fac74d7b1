"""The training engine shared by every trained model (NUGGET/TSDAE, the sub-sentence encoder and the
distilled document student).

Modules:
- ``engine``: ``TrainConfig``, the ``TrainingTask`` plug-in interface and ``Trainer``/``train_task`` (the loop:
  schedules, accumulation, clipping, mixed precision, DDP, best-by-dev, resumption, time safety net);
- ``safety_net``: how a Snakemake rule carries the time safety net (a resource, so raising it resumes);
- ``checkpoint``: atomic checkpoints, safe (``weights_only``) loading, RNG states, the same-run check;
- ``distributed``: device/precision/torchrun set-up (``Runtime``) and ``all_gather_with_grad``;
- ``metrics``: ``metrics.csv``;
- ``compilation``: ``train.compile``'s regional compilation (``torch.compile`` on each repeated block).

Names load on first use (PEP 562): the workflow imports ``safety_net`` while it parses, and torch would
otherwise cost every Snakemake start.
"""

from __future__ import annotations

from multivec.pipeline.lazy_exports import lazy_exports

_WHERE = {
    "Runtime": "distributed", "all_gather_with_grad": "distributed", "setup_runtime": "distributed",
    "TrainConfig": "engine", "Trainer": "engine", "TrainingTask": "engine", "TrainingTimeLimitError": "engine",
    "seeded_generator": "engine", "train_task": "engine",
}

__all__ = sorted(_WHERE)

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
