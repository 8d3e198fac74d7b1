"""One ranking task in BEIR's layout, with each query's candidates (rules/interop.smk)."""
from pathlib import Path

from multivec.interop.ranking_formats import write_beir
from multivec.pipeline.script_support import rule_logging
from multivec.tasks.ranking_task import RankingTask

with rule_logging(snakemake.log[0]) as log:
    task = RankingTask.load(Path(snakemake.input.task).parent)
    write_beir(task, snakemake.output.folder)
    log.info("%d queries, %d documents -> %s", task.n_queries, len(task.used_document_ids()), snakemake.output.folder)
