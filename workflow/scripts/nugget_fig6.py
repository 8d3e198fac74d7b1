"""Fig. 6: AE dev documents with each token shaded by its score and the nuggets marked (HTML, PNG, JSON)."""
import os
from pathlib import Path

from multivec.io import write_json
from multivec.nugget.analysis.highlight import highlight_html, highlight_records, plot_highlight
from multivec.nugget.analysis.selected_tokens import short_documents
from multivec.nugget.modeling import NuggetModel
from multivec.io.resources import default_device
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    p, s = snakemake.params, snakemake.params.settings
    model_dir = os.path.dirname(snakemake.input.config)
    model = NuggetModel.from_pretrained(model_dir, device=default_device())
    rows = [row for row, _ in short_documents(snakemake.input.dev, model, s["documents"], s["max_tokens"])]
    records = highlight_records(model, rows, s["max_tokens"])
    title = f"NUGGET Fig. 6 — AE, r = {s['ratio']} ({p.scale})"
    caption = ("Darker tokens have higher scores (eq. 2, scaled per document); tokens on green are the nuggets. "
               f"Model: {model_dir}.")
    Path(snakemake.output.html).write_text(highlight_html(records, title, caption), encoding="utf-8")
    plot_highlight(records, snakemake.output.figure, title)
    write_json(snakemake.output.scores, {"model": model_dir, "ratio": s["ratio"], "documents": records})
    log.info("%d documents, %d tokens, %d nuggets", len(records), sum(len(r["tokens"]) for r in records),
             sum(t["selected"] for r in records for t in r["tokens"]))
