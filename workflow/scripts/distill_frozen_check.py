# results/distill_frozen_check.json: the frozen-backbone student embeds exactly as the untrained one.
from multivec.distill.tables.main_table import frozen_check
from multivec.io import write_json
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    record = frozen_check(snakemake.params.entries, snakemake.params.tasks)
    write_json(snakemake.output[0], record)
    log.info("%s", record)
