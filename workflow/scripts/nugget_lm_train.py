"""Train one NUGGET LM row (Table 3) from its AE model with the shared training engine."""
import os

from multivec.nugget.language_model import LMSettings, train
from multivec.nugget.lm_data import read_streams
from multivec.training.engine import TrainConfig
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    train_config = TrainConfig.from_rule(snakemake.params.train, snakemake.resources.max_minutes)
    summary = train(LMSettings.from_dict(snakemake.params.lm), os.path.dirname(snakemake.input.init),
                    train_config, read_streams(snakemake.input.train),
                    read_streams(snakemake.input.dev), os.path.dirname(snakemake.output.weights),
                    max_dev_segments=snakemake.params.max_dev_segments,
                    max_train_segments=snakemake.params.max_train_segments)
    log.info("training summary: %s", summary)
