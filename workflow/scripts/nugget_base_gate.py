"""Sanity gates of the shared r = 1 seq2seq model: reconstruction BLEU and dev loss vs unigram."""
import os

from multivec.io import write_json
from multivec.nugget.gates import base_gate
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    gate = base_gate(os.path.dirname(snakemake.input.config), snakemake.input.dev, snakemake.wildcards.objective,
                     **snakemake.params.gate)
    write_json(snakemake.output[0], gate)
    (log.info if gate["passes"] else log.error)("%s", gate["message"])
