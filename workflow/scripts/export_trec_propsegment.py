"""One ranking of a PropSegment retrieval evaluation as a TREC run and qrels (rules/interop.smk)."""
from multivec.interop.propsegment_formats import write_propsegment_trec
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    written = write_propsegment_trec(snakemake.input.rankings, snakemake.output.run, snakemake.output.qrels,
                                     snakemake.params.ranking, snakemake.params.part, snakemake.params.run_name,
                                     snakemake.params.ties)
    log.info("%s (ranking %s%s) -> %s (ties %s)", snakemake.input.rankings, snakemake.params.ranking,
             "" if snakemake.params.part is None else f", {snakemake.params.part} queries",
             ", ".join(map(str, written.values())), snakemake.params.ties)
