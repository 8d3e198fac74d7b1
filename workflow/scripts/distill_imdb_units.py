# results/units/distill_imdb.<seedset>.parquet: every IMDB row's test reviews, correct x 100.
from multivec.distill.tables.imdb_table import imdb_measurements
from multivec.statistics import write_units
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    measurements = imdb_measurements(snakemake.params.entries)
    log.info("%d measurements, %d unit lines -> %s", len(measurements),
             write_units(snakemake.output[0], measurements), snakemake.output[0])
