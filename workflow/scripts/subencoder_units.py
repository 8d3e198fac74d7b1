"""Rules units_subencoder_retrieval and units_subencoder_table7: a table's per-unit scores (queries for
Tables 1, 4, 5, 8; sentences for Table 7) as the statistics layer's Parquet file."""
from multivec.io import read_json
from multivec.statistics import write_units
from multivec.subencoder.tables.units import segmentation_measurements, table_measurements
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    if snakemake.rule == "units_subencoder_table7":
        measurements = segmentation_measurements(read_json(snakemake.input.scores))
    else:
        measurements = table_measurements(snakemake.wildcards.table, snakemake.params.entries)
    lines = write_units(snakemake.output[0], measurements)
    log.info("%s: %d measurements, %d unit lines", snakemake.output[0], len(measurements), lines)
