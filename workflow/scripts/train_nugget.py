import os

from multivec.nugget.configuration import NuggetConfig
from multivec.nugget.training import TrainConfig, train
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    model_config = NuggetConfig.from_dict(snakemake.params.model)
    train_config = TrainConfig.from_dict(snakemake.params.train)
    summary = train(model_config, train_config, snakemake.input.train, snakemake.input.dev,
                    os.path.dirname(snakemake.output.weights))
    log.info("training summary: %s", summary)
