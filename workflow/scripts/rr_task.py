import os

from multivec.data.wikitext import parse_wikitext
from multivec.tasks.passage_reranking import build_passage_reranking_task
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0]) as log:
    articles = [article for path in snakemake.input.wikitext for article in parse_wikitext(path)]
    task = build_passage_reranking_task(articles, n_queries=snakemake.params.settings["n_queries"],
                                        seed=snakemake.params.seed)
    task.save(os.path.dirname(snakemake.output.task))
    log.info("RR (%s): %d queries from %d articles", snakemake.params.settings["source"], task.n_queries,
             len(articles))
