"""RR task (NUGGET App. A) from WikiText as real text: detokenised, <unk> as the encoder tokenizer's one
unknown token; the unknown-token share goes into meta.json and warns above data.max_unknown_share."""
import os

from multivec.data.unknown_tokens import check_unknown_share, unknown_share
from multivec.data.wikitext import is_tokenized, read_wikitext
from multivec.io import write_meta
from multivec.io.resources import load_tokenizer
from multivec.tasks.passage_reranking import build_passage_reranking_task
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p = snakemake.params
    settings = p.settings
    paths = list(snakemake.input.wikitext)
    tokenizer = load_tokenizer(p.encoder)
    tokenized = {path: is_tokenized(path) for path in paths}
    source_warnings: list[str] = []  # a WikiText copy that shrank from its registered counts
    articles = [article for path in paths
                for article in read_wikitext(path, tokenizer.unk_token, tokenized[path], source_warnings)]
    counts: dict = {}
    task = build_passage_reranking_task(articles, n_queries=settings["n_queries"], seed=p.seed,
                                        min_queries=settings.get("min_queries"), source=", ".join(paths),
                                        counts=counts)
    folder = os.path.dirname(snakemake.output.task)
    task.save(folder)
    warnings = source_warnings + counts.pop("warnings")
    unknown = unknown_share(task.documents.values(), tokenizer, label=p.encoder)
    check_unknown_share("RR task", unknown, p.checks["max_unknown_share"], ", ".join(paths), warnings)
    write_meta(folder, "rr_task", {"wikitext": paths}, counts, warnings, source=settings["source"],
               min_queries=settings.get("min_queries"), tokenized_input=tokenized,
               unknown_tokens={**unknown, "max_share": p.checks["max_unknown_share"]})
    log.info("RR (%s): %d queries from %d articles; %.2f%% of %d %s tokens unknown", settings["source"],
             task.n_queries, len(articles), 100 * unknown["share"], unknown["tokens"], p.encoder)
