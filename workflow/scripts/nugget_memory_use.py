"""Does the decoder read the nuggets? Memory gain and loss by distance to the nearest nugget, per zoo model."""
from pathlib import Path

import pandas as pd

from multivec.nugget.analysis.memory_use import memory_use_markdown, model_memory_use
from multivec.io.resources import default_device
from multivec.statistics.resampling import BootstrapSettings
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    s, statistics = snakemake.params.settings, snakemake.params.statistics
    settings = BootstrapSettings.from_statistics(statistics)
    rows = []
    for name, model in snakemake.params.models.items():
        row = {"model": name, "objective": model["objective"],
               **model_memory_use(model["folder"], snakemake.params.dev[model["objective"]], s["documents"],
                                  s["batch_size"], settings, device=default_device())}
        log.info("%s: %.3f nats/token with its own memory, %.3f with another document's (gain %.3f [%.3f, %.3f]); "
                 "unigram %.3f", name, row["nats_own"], row["nats_other_document"], row["memory_gain"],
                 row["memory_gain_lo"], row["memory_gain_hi"], row["unigram_nats"])
        rows.append(row)
    pd.DataFrame(rows).to_csv(snakemake.output.csv, index=False, float_format="%.6g")
    lines = ["# Does the decoder read the nuggets?", ""]
    lines += memory_use_markdown(rows, statistics["confidence"])
    Path(snakemake.output.md).write_text("\n".join(lines) + "\n", encoding="utf-8")
