"""Fig. 5, one model: every source token's type and whether it was selected, per dev document (JSONL)."""
import os

from multivec.io import write_jsonl
from multivec.nugget.analysis.selected_tokens import document_selections, score_documents, short_documents
from multivec.nugget.modeling import NuggetModel
from multivec.io.resources import default_device
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    s = snakemake.params.settings
    model = NuggetModel.from_pretrained(os.path.dirname(snakemake.input.weights), device=default_device())
    chosen = short_documents(snakemake.input.dev, model, s["documents"], s["max_tokens"])
    docs = score_documents(model, [(row["id"], ids) for row, ids in chosen])
    count = write_jsonl(snakemake.output[0], document_selections(model.processor.source_tokenizer, docs))
    log.info("%s: %d documents", snakemake.output[0], count)
