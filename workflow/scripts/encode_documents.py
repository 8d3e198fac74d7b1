# The document tasks' documents (Lee, polarity) through one of Table 2's encoders: the representation matrix.
import os

from multivec.io import read_jsonl
from multivec.nugget.tables.table2_rows import write_document_encodings
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    model_dir = os.path.dirname(snakemake.input.config) if "config" in snakemake.input.keys() else None
    for task in snakemake.params.tasks:
        documents = read_jsonl(snakemake.input[task])
        write_document_encodings([d["id"] for d in documents], [d["text"] for d in documents], snakemake.output[task],
                                 model_dir=model_dir, base_encoder=snakemake.params.base_encoder,
                                 max_tokens=snakemake.params.max_tokens, batch_size=snakemake.params.batch_size,
                                 bf16=snakemake.params.bf16)
        log.info("%s: %d documents", snakemake.output[task], len(documents))
