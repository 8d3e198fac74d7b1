# One demo evaluation task of the distillation work: its documents and its gold folder.
from multivec.distill.data.documents import build_eval_task
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    task = snakemake.wildcards.task
    docs = build_eval_task(task, dict(snakemake.input), snakemake.output.documents, snakemake.output.gold,
                           n_queries=snakemake.params.n_queries)
    log.info("%s: %d documents", task, len(docs))
