"""The training engine shared by every trained model (NUGGET/TSDAE now; the sub-sentence encoder and the
distilled document student next).

Modules:
- ``engine``: ``TrainConfig``, the ``TrainingTask`` plug-in interface and ``Trainer``/``train_task`` (the loop:
  schedules, accumulation, clipping, mixed precision, DDP, best-by-dev, resumption, time safety net);
- ``checkpoint``: atomic checkpoints, safe (``weights_only``) loading, RNG states, the same-run check;
- ``distributed``: device/precision/torchrun set-up (``Runtime``) and ``all_gather_with_grad``;
- ``metrics``: ``metrics.csv``.
"""

from multivec.training.distributed import Runtime, all_gather_with_grad, setup_runtime
from multivec.training.engine import (TrainConfig, Trainer, TrainingTask, TrainingTimeLimitError, seeded_generator,
                                      train_task)

__all__ = ["Runtime", "TrainConfig", "Trainer", "TrainingTask", "TrainingTimeLimitError", "all_gather_with_grad",
           "seeded_generator", "setup_runtime", "train_task"]
