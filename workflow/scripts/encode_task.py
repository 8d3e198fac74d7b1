import os

from multivec.nugget.tables.table2_rows import write_task_encodings
from multivec.tasks.ranking_task import RankingTask
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads):
    task = RankingTask.load(os.path.dirname(snakemake.input.task))
    model_dir = os.path.dirname(snakemake.input.config) if "config" in snakemake.input.keys() else None
    write_task_encodings(task, snakemake.output[0], model_dir=model_dir, base_encoder=snakemake.params.base_encoder,
                         max_tokens=snakemake.params.max_tokens, batch_size=snakemake.params.batch_size,
                         bf16=snakemake.params.bf16,
                         frozen_bottom=snakemake.input.get("frozen_bottom"))
