"""Snakemake script: the embedding space of every distillation row (rule distill_geometry, rules/distill.smk)."""

from multivec.distill.analysis.geometry import write_geometry
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:  # noqa: F821
    params, output = snakemake.params, snakemake.output  # noqa: F821
    frame = write_geometry(params.entries, params.tasks, params.statistics, output.csv, output.md, output.tests,
                           note=params.note)
    log.info("%d rows on %s", len(frame), ", ".join(params.tasks))
