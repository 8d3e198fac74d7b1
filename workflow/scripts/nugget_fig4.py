"""Fig. 4: reconstruction BLEU against the compression ratio, a line per objective, beside each model's
best dev loss (CSV, Markdown, PNG); BLEU with its bootstrap CI over documents, comparisons, claims."""
from pathlib import Path

from multivec.nugget.tables.uncertainty import statistics_lines
from multivec.statistics import statistics_note, table_statistics_from_units
from multivec.io import read_json
from multivec.nugget.analysis.reconstruction_bleu import fig4_markdown, fig4_table, plot_fig4, with_bleu_statistics
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p = snakemake.params
    stats = table_statistics_from_units(snakemake.input.units, p.comparisons, p.statistics)
    df = with_bleu_statistics(fig4_table([read_json(path) for path in snakemake.input.bleu],
                                         [read_json(path) for path in snakemake.input.trainings]), stats)
    df.to_csv(snakemake.output.csv, index=False)
    stats.write_tests(snakemake.output.tests)
    scale_line = (f"Scale: **{p.scale}**, encoder `{p.encoder}`; corpus dev documents, beam search from the nuggets.\n\n"
                  + statistics_note(p.statistics["confidence"], p.seeds, "documents"))
    notes = statistics_lines(stats, snakemake.input.claims, {"nugget_fig4": snakemake.input.units}, p.claims)
    Path(snakemake.output.md).write_text(fig4_markdown(df, scale_line, notes), encoding="utf-8")
    plot_fig4(df, snakemake.output.figure, f"NUGGET Fig. 4 — reconstruction BLEU ({p.scale})")
    log.info("\n%s", df.to_string(index=False))
