"""PropSegment's retrieval set in BEIR's layout under one protocol, each proposition as text (rules/interop.smk)."""
from pathlib import Path

from multivec.interop.propsegment_beir import write_propsegment_beir
from multivec.pipeline.script_support import rule_logging
from multivec.subencoder.evaluation.retrieval_set import build_retrieval_set

with rule_logging(snakemake.log[0]) as log:
    rs = build_retrieval_set(Path(snakemake.input.relationships).parent)
    write_propsegment_beir(rs, snakemake.output.folder, snakemake.wildcards.protocol)
    log.info("%d queries, %d candidates, protocol %s -> %s", len(rs.queries), len(rs.candidates),
             snakemake.wildcards.protocol, snakemake.output.folder)
