"""One ranking evaluation's rankings as a TREC run and qrels (rules/interop.smk)."""
from multivec.interop.ranking_formats import write_trec
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    written = write_trec(snakemake.input.rankings, snakemake.output.run, snakemake.output.qrels,
                         snakemake.params.run_name, snakemake.params.ties)
    log.info("%s -> %s (ties %s)", snakemake.input.rankings, ", ".join(map(str, written.values())),
             snakemake.params.ties)
