# The thesis's classification head on one row's frozen IMDB embeddings -> results/distill_imdb/<row>.json.
from multivec.distill.classification_head import HeadConfig
from multivec.distill.imdb import evaluate_row
from multivec.io import write_json
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    cfg = HeadConfig.from_dict(snakemake.params.head)
    row = evaluate_row(snakemake.wildcards.row, snakemake.params.kind,
                       {"train": snakemake.input.train, "test": snakemake.input.test},
                       {"train": snakemake.input.train_documents, "test": snakemake.input.test_documents}, cfg)
    write_json(snakemake.output[0], {**row, "head": cfg.to_dict()})
    log.info("%s", row)
