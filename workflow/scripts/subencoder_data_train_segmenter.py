"""Rule subencoder_data_train_segmenter: T5 distilled from the LLM's claims (App. A.2)."""
import os

from multivec.io import read_jsonl
from multivec.subencoder.data.segmenter_distillation import train_segmenter
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    seg = snakemake.params.segmenter
    hp = seg["seq2seq_train"]
    summary = train_segmenter(seg["seq2seq_base"], read_jsonl(snakemake.input.seed),
                              os.path.dirname(snakemake.output.weights),
                              lr=float(hp["lr"]), batch_size=int(hp["batch_size"]), epochs=int(hp["epochs"]),
                              seed=int(snakemake.params.seed))
    log.info("segmenter trained: %s", summary)
