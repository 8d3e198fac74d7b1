# The thesis's classification head on one row's frozen IMDB embeddings (one seed) ->
# results/distill_imdb/<row>/<seeding>.json and each test review's prediction (.reviews.jsonl).
from multivec.distill.evaluation.classification_head import HeadConfig
from multivec.distill.tables.imdb_table import evaluate_row
from multivec.io import write_json, write_jsonl
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    cfg = HeadConfig.from_dict(snakemake.params.head)
    row, reviews = evaluate_row(snakemake.wildcards.row, snakemake.params.kind,
                                {"train": snakemake.input.train, "test": snakemake.input.test},
                                {"train": snakemake.input.train_documents, "test": snakemake.input.test_documents},
                                cfg)
    write_json(snakemake.output.row, {**row, "seeding": snakemake.wildcards.seeding, "head": cfg.to_dict()})
    write_jsonl(snakemake.output.reviews, reviews)
    log.info("%s", row)
