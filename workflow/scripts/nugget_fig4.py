"""Fig. 4: reconstruction BLEU against the compression ratio, a line per objective, beside each model's
best dev loss (CSV, Markdown, PNG)."""
from pathlib import Path

from multivec.io import read_json
from multivec.nugget.analysis.reconstruction_bleu import fig4_markdown, fig4_table, plot_fig4
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p = snakemake.params
    df = fig4_table([read_json(path) for path in snakemake.input.bleu],
                    [read_json(path) for path in snakemake.input.trainings])
    df.to_csv(snakemake.output.csv, index=False)
    scale_line = f"Scale: **{p.scale}**, encoder `{p.encoder}`; corpus dev documents, beam search from the nuggets."
    Path(snakemake.output.md).write_text(fig4_markdown(df, scale_line), encoding="utf-8")
    plot_fig4(df, snakemake.output.figure, f"NUGGET Fig. 4 — reconstruction BLEU ({p.scale})")
    log.info("\n%s", df.to_string(index=False))
