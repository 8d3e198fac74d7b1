"""Figs. 7-8: per-document mean probability gain per signed-distance bin, every (length, seed), as one unit file."""
from multivec.nugget.analysis.gain_bins import gain_measurements, shared_documents
from multivec.statistics import write_units
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    measurements = []
    for path, (row, seed) in zip(snakemake.input, snakemake.params.files):
        found, dropped = gain_measurements(path, row, seed)
        if dropped:
            log.warning("%s: %d document(s) without pairs in every distance bin left out", path, dropped)
        measurements += found
    measurements, unshared = shared_documents(measurements)
    for row, dropped in unshared.items():
        if dropped:
            log.warning("%s: %d document(s) kept by only some seeds left out", row, dropped)
    lines = write_units(snakemake.output[0], measurements)
    log.info("%s: %d unit lines", snakemake.output[0], lines)
