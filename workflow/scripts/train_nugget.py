import os

from multivec.nugget.configuration import NuggetConfig, resolve_sentence_ratio
from multivec.nugget.sentence_share import read_share
from multivec.nugget.training import TrainConfig, train
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    settings = snakemake.params.model
    if snakemake.input.get("sentence_share"):  # Table 4's r_sb rows: the measured share is the ratio
        settings = resolve_sentence_ratio(settings, read_share(snakemake.input.sentence_share))
    model_config = NuggetConfig.from_dict(settings)
    train_config = TrainConfig.from_rule(snakemake.params.train, snakemake.resources.max_minutes)
    init = snakemake.input.get("init")  # the shared r = 1 seq2seq model this one starts from (zoo)
    summary = train(model_config, train_config, snakemake.input.train, snakemake.input.dev,
                    os.path.dirname(snakemake.output.weights), init_from=os.path.dirname(init) if init else None)
    log.info("training summary: %s", summary)
