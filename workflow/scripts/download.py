from multivec.data.download import fetch
from multivec.io.resources import data_mirror
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]):
    # The run exported the mirror as an absolute $MULTIVEC_DATA_MIRROR (rules/common.smk).
    fetch(snakemake.wildcards.source, snakemake.wildcards.file, snakemake.output[0],
          mirror=data_mirror(snakemake.config.get("data_mirror") or None))
