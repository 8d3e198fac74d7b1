from multivec.data.download import fetch
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0]):
    fetch(snakemake.wildcards.source, snakemake.wildcards.file, snakemake.output[0],
          mirror=snakemake.params.mirror or None)
