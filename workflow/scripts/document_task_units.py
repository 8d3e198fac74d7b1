# Per-unit scores of Table 2's vector rows on the document tasks (Lee pairs, polarity sentences).
from multivec.nugget.tables.table2_rows import document_task_measurements
from multivec.pipeline.script_support import rule_logging
from multivec.statistics import write_units

with rule_logging(snakemake.log[0]) as log:
    rows = snakemake.params.rows
    entries = [(folder, {"name": row, **rows[row]}, seed, task, gold)
               for folder, row, seed, task, gold in snakemake.params.files]
    n = write_units(snakemake.output[0], document_task_measurements(entries))
    log.info("%s: %d unit scores of %d (row, seed, task) runs", snakemake.output[0], n, len(entries))
