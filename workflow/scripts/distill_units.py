"""Snakemake script: a distillation table's rows scored per evaluation unit -> its unit file
(rules units_distill_table, units_distill_teachers; multivec.distill.tables.statistics)."""
from multivec.distill.tables.statistics import embedding_measurements
from multivec.statistics import write_units
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:  # noqa: F821
    params = snakemake.params  # noqa: F821
    measurements = embedding_measurements(params.entries, params.tasks, params.task_files)
    lines = write_units(snakemake.output[0], measurements)  # noqa: F821
    log.info("%d measurements, %d unit lines -> %s", len(measurements), lines, snakemake.output[0])  # noqa: F821
