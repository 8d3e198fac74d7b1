# results/distill_teachers.{csv,md}: every teacher on every demo evaluation task.
from multivec.distill.teacher_table import teacher_row, write_table
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0]) as log:
    tasks = snakemake.params.tasks
    rows = [teacher_row(name, kind, folders, tasks) for name, kind, folders in snakemake.params.teachers]
    write_table(rows, snakemake.output.csv, snakemake.output.md)
    for row in rows:
        log.info("%s", row)
