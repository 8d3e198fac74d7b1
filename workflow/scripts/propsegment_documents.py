# PropSegment dev's query and candidate propositions as texts: what a whole-text encoder embeds (distillation rows).
import os

from multivec.interop.propsegment_beir import retrieval_set_documents
from multivec.io import write_jsonl
from multivec.pipeline.script_support import rule_logging
from multivec.subencoder.evaluation.retrieval_set import build_retrieval_set

with rule_logging(snakemake.log[0]) as log:
    rs = build_retrieval_set(os.path.dirname(snakemake.input.relationships))
    documents = retrieval_set_documents(rs)
    write_jsonl(snakemake.output[0], documents)
    log.info("%s: %d query and %d candidate propositions", snakemake.output[0], len(rs.queries), len(rs.candidates))
