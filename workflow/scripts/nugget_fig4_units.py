"""Fig. 4: per-document sacrebleu statistics of every (objective, ratio, seed) model as one unit file."""
from multivec.nugget.analysis.reconstruction_bleu import bleu_measurement
from multivec.statistics import write_units
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    measurements = [bleu_measurement(path, row, seed, objective)
                    for path, (row, seed, objective) in zip(snakemake.input, snakemake.params.files)]
    lines = write_units(snakemake.output[0], measurements)
    log.info("%s: %d unit lines from %d models", snakemake.output[0], lines, len(measurements))
