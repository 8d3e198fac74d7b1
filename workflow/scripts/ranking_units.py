"""Per-query 100/rank of every (row, seed, task) of a ranking table (Tables 2 and 4) as one unit file."""
from multivec.nugget.tables.uncertainty import ranking_measurements
from multivec.statistics import write_units
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    files = [(path, row, seed, task) for path, (row, seed, task) in zip(snakemake.input, snakemake.params.files)]
    lines = write_units(snakemake.output[0], ranking_measurements(files))
    log.info("%s: %d unit lines from %d rankings files", snakemake.output[0], lines, len(files))
