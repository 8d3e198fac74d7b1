# results/distill_imdb.{csv,md}: every row's IMDB accuracy with the thesis's head.
from multivec.distill.imdb import write_table
from multivec.io import read_json
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0]) as log:
    rows = [read_json(path) for path in snakemake.input]
    write_table(rows, snakemake.output.csv, snakemake.output.md, snakemake.params.note)
    log.info("%d rows -> %s", len(rows), snakemake.output.csv)
