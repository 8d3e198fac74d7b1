import os

from multivec.subencoder.configuration import SubEncoderConfig
from multivec.subencoder.training import train
from multivec.training.engine import TrainConfig
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    train_config = TrainConfig.from_rule(snakemake.params.train, snakemake.resources.max_minutes)
    summary = train(SubEncoderConfig.from_dict(snakemake.params.model), train_config,
                    snakemake.input.train, snakemake.input.dev, os.path.dirname(snakemake.output.weights),
                    temperature=float(snakemake.params.temperature))
    log.info("training summary: %s", summary)
