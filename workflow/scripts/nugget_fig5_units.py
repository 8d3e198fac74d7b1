"""Fig. 5: per-document delimiter and 'the' counts of every (objective, seed) model as one unit file."""
from multivec.nugget.analysis.selected_tokens import share_measurements
from multivec.statistics import write_units
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    measurements = [m for path, (row, seed) in zip(snakemake.input, snakemake.params.files)
                    for m in share_measurements(path, row, seed)]
    lines = write_units(snakemake.output[0], measurements)
    log.info("%s: %d unit lines", snakemake.output[0], lines)
