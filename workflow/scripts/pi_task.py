import os

from multivec.tasks.paraphrase_identification import build_paraphrase_identification_task, read_parabank
from multivec.tasks.ranking_task import RankingTask
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0]) as log:
    settings = snakemake.params.settings
    if settings["source"] == "released":
        task = RankingTask.load(os.path.dirname(snakemake.input.task)).first(settings["n_queries"])
    else:
        pairs = read_parabank(snakemake.input.parabank[0])
        task = build_paraphrase_identification_task(pairs, n_queries=settings["n_queries"],
                                                    max_tokens=snakemake.params.max_tokens, seed=snakemake.params.seed)
    task.save(os.path.dirname(snakemake.output.task))
    log.info("PI (%s): %d queries over %d documents", settings["source"], task.n_queries,
             len(task.used_document_ids()))
