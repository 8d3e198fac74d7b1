import os

from multivec.data.wikitext import parse_wikitext
from multivec.io import write_meta
from multivec.tasks.passage_reranking import build_passage_reranking_task
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0]) as log:
    settings = snakemake.params.settings
    paths = list(snakemake.input.wikitext)
    articles = [article for path in paths for article in parse_wikitext(path)]
    counts: dict = {}
    task = build_passage_reranking_task(articles, n_queries=settings["n_queries"], seed=snakemake.params.seed,
                                        min_queries=settings.get("min_queries"), source=", ".join(paths),
                                        counts=counts)
    folder = os.path.dirname(snakemake.output.task)
    task.save(folder)
    warnings = counts.pop("warnings")
    write_meta(folder, "rr_task", {"wikitext": paths}, counts, warnings, source=settings["source"],
               min_queries=settings.get("min_queries"))
    log.info("RR (%s): %d queries from %d articles", settings["source"], task.n_queries, len(articles))
