"""Figs. 7-8 as a table: the gain per distance bin and document length, with CIs, comparisons and claims."""
from pathlib import Path

import pandas as pd

from multivec.nugget.tables.uncertainty import statistics_lines
from multivec.statistics import statistics_note, table_statistics_from_units
from multivec.nugget.analysis.gain_bins import DISTANCE_BINS, gain_bins_markdown
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p = snakemake.params
    stats = table_statistics_from_units(snakemake.input.units, p.comparisons, p.statistics)
    rows = list(dict.fromkeys(stats.summary["row"]))
    df = stats.add_columns(pd.DataFrame({"row": rows}), "row", list(DISTANCE_BINS), require=True)
    df.to_csv(snakemake.output.csv, index=False)
    stats.write_tests(snakemake.output.tests)
    header = [f"Scale: **{p.scale}**; the AE model at r = {p.ratio}; WikiText-2 test windows.",
              "", statistics_note(p.statistics["confidence"], p.seeds, "documents")]
    notes = statistics_lines(stats, snakemake.input.claims, {"nugget_fig7_8": snakemake.input.units}, p.claims)
    Path(snakemake.output.md).write_text(gain_bins_markdown(df, header, notes), encoding="utf-8")
    log.info("\n%s", df.to_string(index=False))
