"""Snakemake script: the trained students' loss terms per logged window (rule distill_loss_curves,
rules/distill.smk)."""

from multivec.distill.analysis.loss_curves import write_loss_curves
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:  # noqa: F821
    params, output = snakemake.params, snakemake.output  # noqa: F821
    trends = write_loss_curves(params.runs, output.csv, output.md, output.png, share=params.share, note=params.note)
    rising = trends[~trends["fell"]]
    log.info("%d (run, seed, term) curves; %d did not fall", len(trends), len(rising))
