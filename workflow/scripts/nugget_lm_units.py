"""Table 3: per-segment word NLL of every (LM, seed) at every h as one unit file (ppl_h*, drop_h0_h*)."""
from multivec.nugget.lm_table3 import lm_measurements
from multivec.statistics import write_units
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    measurements = [m for path, (row, seed) in zip(snakemake.input, snakemake.params.files)
                    for m in lm_measurements(path, row, seed, snakemake.params.histories)]
    lines = write_units(snakemake.output[0], measurements)
    log.info("%s: %d unit lines", snakemake.output[0], lines)
