# results/distill_teachers.{csv,md}: every teacher on every demo evaluation task, metrics from the unit file.
from multivec.distill.tables.teacher_table import teacher_row, write_table
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    params = snakemake.params
    rows = [teacher_row(name, kind, folders, params.tasks) for name, kind, folders in params.teachers]
    write_table(rows, params.tasks, snakemake.input.units, params.comparisons, params.statistics,
                snakemake.output.csv, snakemake.output.md, snakemake.output.tests,
                claims_file=snakemake.input.claims, claims=params.claims)
    for row in rows:
        log.info("%s", row)
