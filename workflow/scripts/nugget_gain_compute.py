"""Eq. 9 of NUGGET (§5.3): per (document, nugget, position) probability gains of one document length."""
import os
import time


from multivec.io import read_jsonl
from multivec.nugget.analysis.probability_gain import document_gains, prepare_document, save_gains
from multivec.nugget.modeling import NuggetModel
from multivec.io.resources import default_device
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    length = int(snakemake.wildcards.length)
    model = NuggetModel.from_pretrained(os.path.dirname(snakemake.input.weights), device=default_device())
    rows = [r for r in read_jsonl(snakemake.input.documents) if r.get("length") == length]
    if not rows:
        raise ValueError(f"{snakemake.input.documents}: no document of length {length}")
    start, results, prepared, ids, short = time.time(), [], [], [], 0
    for row in rows:
        document = prepare_document(model, row["text"], length)
        if document is None:
            short += 1
            continue
        results.append(document_gains(model, document, snakemake.params.memory_positions))
        prepared.append(document)
        ids.append(row["id"])
    if not results:
        raise ValueError(f"{snakemake.input.documents}: no document of length {length} has {length} target tokens")
    if short:
        log.warning("%d of %d documents have fewer than %d target tokens: skipped", short, len(rows), length)
    save_gains(snakemake.output.gains, results, prepared, ids, length)
    log.info("%s, length %d: %d documents, %.1f nuggets each, %.2f s per document",
             "memory with positions" if snakemake.params.memory_positions else "vectors alone", length, len(results),
             sum(len(r.positions) for r in results) / len(results), (time.time() - start) / len(results))
