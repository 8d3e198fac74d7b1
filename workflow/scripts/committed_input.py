"""Copy one small JSON file a results table reads to its committed place (rule committed_input)."""
from multivec.io.committed_inputs import copy_input
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    copy_input(snakemake.params.source, snakemake.output[0])
    log.info("%s -> %s", snakemake.params.source, snakemake.output[0])
