# results/distill_imdb.{csv,md}: every row's IMDB accuracy with the thesis's head, CIs from the unit file.
from multivec.distill.tables.imdb_table import write_table
from multivec.io import read_json
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    params = snakemake.params
    rows = [read_json(path) for path in snakemake.input.rows]
    write_table(rows, snakemake.input.units, params.comparisons, params.statistics, snakemake.output.csv,
                snakemake.output.md, snakemake.output.tests, params.note, claims_file=snakemake.input.claims,
                claims=params.claims)
    log.info("%d rows -> %s", len(rows), snakemake.output.csv)
