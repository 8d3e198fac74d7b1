import os

from multivec.nugget.configuration import NuggetConfig
from multivec.nugget.frozen_bottom import write_bottom_states
from multivec.tasks.ranking_task import RankingTask
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads):
    task = RankingTask.load(os.path.dirname(snakemake.input.task))
    ids = task.used_document_ids()
    write_bottom_states(snakemake.output[0], ids, [task.documents[i] for i in ids],
                        NuggetConfig(**snakemake.params.nugget), snakemake.params.max_tokens,
                        snakemake.params.batch_size)
