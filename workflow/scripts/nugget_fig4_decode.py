"""Fig. 4, one (objective, ratio): beam-search the dev documents from their nuggets, corpus BLEU."""
import os

from multivec.io import write_json, write_jsonl
from multivec.nugget.analysis.reconstruction_bleu import HYPOTHESIS_KEYS, dev_documents, reconstruct
from multivec.nugget.modeling import NuggetModel
from multivec.io.resources import default_device
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    s, wc = snakemake.params.settings, snakemake.wildcards
    rows = dev_documents(snakemake.input.dev, wc.objective, s["max_documents"])
    model_dir = os.path.dirname(snakemake.input.config)
    model = NuggetModel.from_pretrained(model_dir, device=default_device())
    records, summary = reconstruct(model, rows, wc.objective, num_beams=s["num_beams"], batch_size=s["batch_size"],
                                   max_new_tokens=s["max_new_tokens"])
    summary.update(ratio=wc.ratio, model=model_dir, corpus=snakemake.input.dev)
    write_jsonl(snakemake.output.hypotheses,
                [{k: r[k] for k in HYPOTHESIS_KEYS} for r in records])
    write_json(snakemake.output.bleu, summary)
    log.info("%s r=%s: BLEU %.2f (ceiling %.2f, lowercased %s) over %d documents (%.2f vectors each), "
             "decoded in %.1f s", wc.objective, wc.ratio, summary["bleu"], summary["ceiling"], summary["lowercased"],
             summary["documents"], summary["vectors_per_document"], summary["decode_seconds"])
