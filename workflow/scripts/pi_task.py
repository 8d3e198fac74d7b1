import os
from dataclasses import asdict

from multivec.data.sources import check_registered_counts
from multivec.data.unknown_tokens import check_unknown_share, unknown_share
from multivec.io import check_minimum, write_meta
from multivec.io.resources import load_tokenizer
from multivec.tasks.paraphrase_identification import ParabankCounts, build_paraphrase_identification_task_from_file
from multivec.tasks.ranking_task import RankingTask
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    settings = snakemake.params.settings
    folder = os.path.dirname(snakemake.output.task)
    warnings: list[str] = []
    if settings["source"] == "released":
        inputs = {"docs": snakemake.input.docs, "task": snakemake.input.task}
        released = RankingTask.load(os.path.dirname(snakemake.input.task))
        # a copy of the registered release that shrank (or was edited) warns, or stops below half
        check_registered_counts(snakemake.input.task, {"queries": released.n_queries}, warnings)
        check_registered_counts(snakemake.input.docs, {"documents": len(released.documents)}, warnings)
        if settings["n_queries"] > released.n_queries:
            raise ValueError(f"config key table2.pi.n_queries is {settings['n_queries']}, but {snakemake.input.task} "
                             f"holds {released.n_queries} queries: lower table2.pi.n_queries to at most "
                             f"{released.n_queries} (table2.pi.source: released)")
        task = released.first(settings["n_queries"])
        counts = {"released_queries": released.n_queries, "released_documents": len(released.documents),
                  "empty_documents": len(task.empty_document_ids)}
        check_minimum("PI queries", task.n_queries, settings.get("min_queries"), snakemake.input.task, warnings)
    else:
        inputs = {"parabank": list(snakemake.input.parabank)}
        parabank = ParabankCounts()
        task = build_paraphrase_identification_task_from_file(
            snakemake.input.parabank[0], counts=parabank, n_queries=settings["n_queries"],
            max_tokens=snakemake.params.max_tokens, seed=snakemake.params.seed,
            min_queries=settings.get("min_queries"), warnings=warnings)
        counts = asdict(parabank)
    task.save(folder)
    counts.update(queries=task.n_queries, documents=len(task.used_document_ids()))
    used = task.used_document_ids()
    unknown = unknown_share([task.documents[d] for d in sorted(used)], load_tokenizer(snakemake.params.encoder),
                            label=snakemake.params.encoder)
    check_unknown_share("PI task", unknown, snakemake.params.checks["max_unknown_share"], folder, warnings)
    write_meta(folder, "pi_task", inputs, counts, warnings, source=settings["source"],
               min_queries=settings.get("min_queries"),
               unknown_tokens={**unknown, "max_share": snakemake.params.checks["max_unknown_share"]})
    log.info("PI (%s): %d queries over %d documents", settings["source"], task.n_queries,
             len(task.used_document_ids()))
