"""Snakemake script: train one distilled student (rules/distill.smk, rule distill_student_train)."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)  # noqa: F821
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

from pathlib import Path  # noqa: E402

from multivec.distill.configuration import LossConfig, StudentConfig  # noqa: E402
from multivec.distill.training import train  # noqa: E402
from multivec.training import TrainConfig  # noqa: E402

params = snakemake.params  # noqa: F821
train_config = TrainConfig.from_rule(params.train, snakemake.resources.max_minutes)  # noqa: F821
summary = train(StudentConfig.from_dict(params.student), LossConfig.from_dict(params.loss),
                train_config, snakemake.input.documents,  # noqa: F821
                snakemake.input.structural, snakemake.input.contextual,  # noqa: F821
                Path(snakemake.output.weights).parent)  # noqa: F821
logging.getLogger("distill").info("done: %s", summary)
