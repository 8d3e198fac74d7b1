# The distillation training documents: text no evaluation task uses (checked against them).
import os

from multivec.distill.data.documents import (check_no_overlap, drop_evaluation_overlap, read_documents,
                                             training_documents)
from multivec.io import check_minimum, write_jsonl, write_meta
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    settings = snakemake.params.settings
    sources = {name: snakemake.input[name] for name in settings["train_sources"]}
    rows = training_documents(sources, settings.get("max_words"))
    if settings.get("max_documents"):
        rows = rows[:settings["max_documents"]]
    warnings = []
    check_minimum("distillation training documents", len(rows), settings.get("min_documents"), list(sources.values()),
                  warnings)
    evaluation = {os.path.basename(path)[len("eval_"):-len(".jsonl")]: read_documents(path)
                  for path in snakemake.input.evaluation}
    dropped = []
    if settings.get("drop_evaluation_overlap"):
        rows, dropped = drop_evaluation_overlap(rows, evaluation)
        log.info("%d training documents dropped: they share word 8-grams with the evaluation documents", len(dropped))
    check_no_overlap(rows, evaluation)
    write_jsonl(snakemake.output.documents, rows)
    words = [len(r["text"].split()) for r in rows]
    write_meta(os.path.dirname(snakemake.output.documents), "distill_training_documents", sources,
               {"documents": len(rows), "words": sum(words), "max_words": max(words),
                "dropped_for_evaluation_overlap": len(dropped),
                "per_source": {name: sum(r["id"].startswith(name + "/") for r in rows) for name in sources}},
               warnings, checked_against=sorted(evaluation))
    log.info("%d training documents, %d words", len(rows), sum(words))
