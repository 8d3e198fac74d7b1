"""Figs. 7-8 as a table: the gain per signed-distance bin (before, at and after the nugget's token) and
document length, with CIs, comparisons and claims."""
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
    # the documents every bin of the row uses (gain_measurements: those with pairs in every bin, every seed)
    units = stats.summary[stats.summary["metric"] == next(iter(DISTANCE_BINS))].set_index("row")["n_units"]
    df["documents"] = df["row"].map(units)
    df.to_csv(snakemake.output.csv, index=False)
    stats.write_tests(snakemake.output.tests)
    header = [f"Scale: **{p.scale}**; the AE model at r = {p.ratio}; WikiText-2 test windows; {p.exposure}.",
              "", statistics_note(p.statistics["confidence"], p.seeds, "documents")]
    notes = statistics_lines(stats, snakemake.input.claims, {p.table: snakemake.input.units}, p.claims)
    Path(snakemake.output.md).write_text(gain_bins_markdown(df, header, notes), encoding="utf-8")
    log.info("\n%s", df.to_string(index=False))
