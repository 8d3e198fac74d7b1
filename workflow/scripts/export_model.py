"""One trained model folder as a sentence-transformers folder with its model card (rules/interop.smk)."""
import json
import os

from multivec.interop import export_model
from multivec.pipeline.script_support import rule_logging
from multivec.rules.interop import card_metrics

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    metrics = card_metrics(snakemake.params.metrics)  # {} where the model has no evaluation of its own
    os.makedirs(os.path.dirname(snakemake.output.metrics), exist_ok=True)
    with open(snakemake.output.metrics, "w", encoding="utf-8") as handle:
        json.dump(metrics, handle, indent=1)
    info = export_model(snakemake.params.folder, snakemake.output.folder, snakemake.params.kind,
                        metrics=snakemake.output.metrics if metrics else None)
    log.info("%s (%s) -> %s: %s", snakemake.params.folder, snakemake.params.kind, snakemake.output.folder,
             json.dumps(info, default=str))
