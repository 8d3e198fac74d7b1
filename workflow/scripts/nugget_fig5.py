"""Fig. 5: token types among the nuggets against the text (AE and MT), and §5.2's observations as numbers."""
import os

import pandas as pd

from multivec.nugget.analysis.selected_tokens import (FIG5_COLUMNS, OBSERVATION_COLUMNS, observations, plot_fig5,
                                                      score_documents, short_documents, type_counts)
from multivec.nugget.modeling import NuggetModel
from multivec.io.resources import default_device
from multivec.statistics.resampling import BootstrapSettings
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    p, s = snakemake.params, snakemake.params.settings
    tables, notes = [], []
    bootstrap = BootstrapSettings.from_statistics(p.statistics)
    for objective, dev, weights in zip(p.objectives, snakemake.input.dev, snakemake.input.models):
        model = NuggetModel.from_pretrained(os.path.dirname(weights), device=default_device())
        chosen = short_documents(dev, model, s["documents"], s["max_tokens"])
        if len(chosen) < s["documents"]:
            log.warning("%s: only %d documents of at most %d tokens (fig5.documents = %d)", dev, len(chosen),
                        s["max_tokens"], s["documents"])
        docs = score_documents(model, [(row["id"], ids) for row, ids in chosen])
        counts = type_counts(model.processor.source_tokenizer, docs, bootstrap)
        tables.append(counts.assign(objective=objective))
        notes += [{"objective": objective, **o}
                  for o in observations(model.processor.source_tokenizer, docs, counts, bootstrap)]
    df = pd.concat(tables, ignore_index=True)[FIG5_COLUMNS]
    df.to_csv(snakemake.output.csv, index=False)
    pd.DataFrame(notes, columns=OBSERVATION_COLUMNS).to_csv(snakemake.output.observations, index=False)
    plot_fig5(df, snakemake.output.figure, s["top"],
              f"NUGGET Fig. 5 — top-{s['top']} selected types, r = {s['ratio']} ({p.scale})")
    log.info("\n%s\n%s", df[df["rank"] <= s["top"]].to_string(index=False), pd.DataFrame(notes).to_string(index=False))
