from multivec.data.archives import extract_member
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]):
    extract_member(snakemake.input[0], snakemake.wildcards.member, snakemake.output[0])
