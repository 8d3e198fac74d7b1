"""Token pooling (Clavié et al. 2024): a task's base-encoder token states pooled to NUGGET's k per document,
one encodings folder per ratio."""
from multivec.nugget.tables.table2_rows import write_token_pooling_encodings
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    out_dirs = dict(zip(snakemake.params.ratios, snakemake.output))
    means = write_token_pooling_encodings(snakemake.input.base, out_dirs)
    for ratio, mean in means.items():
        log.info("%s r=%g: %.2f pooled vectors per document", snakemake.wildcards.task, ratio, mean)
