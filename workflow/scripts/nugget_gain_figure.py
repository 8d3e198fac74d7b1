"""Figs. 7, 8 and 11 of NUGGET (§5.3, App. C) from the raw probability gains, each point with its CI over
documents."""
from multivec.nugget.analysis.gain_tables import (by_nugget_table, by_relative_position_table, load_gains,
                                                  plot_by_nugget, plot_by_relative_position)
from multivec.statistics.resampling import BootstrapSettings
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p = snakemake.params
    bootstrap = BootstrapSettings.from_statistics(p.statistics)
    if p.figure == "relative":
        per_length = {}
        for path in snakemake.input.gains:
            gains, positions, length = load_gains(path)
            per_length[length] = (gains, positions)
        df = by_relative_position_table(per_length, bootstrap)
        plot_by_relative_position(df, snakemake.output.png, p.title)
    else:
        gains, positions, length = load_gains(snakemake.input.gains)
        df = by_nugget_table(gains, positions, p.nuggets, length, bootstrap)
        plot_by_nugget(df, snakemake.output.png, p.title, columns=p.columns)
    df.to_csv(snakemake.output.csv, index=False)
    log.info("%s: %d rows, %s%% CIs over documents from %d resamples", snakemake.output.csv, len(df),
             f"{100 * bootstrap.confidence:g}", bootstrap.n_resamples)
