"""Table 3: word-level PPL of every LM row at each h (seed mean, CI over segments), the relative drops,
beside the paper's numbers; comparisons and claims."""
from pathlib import Path

import pandas as pd

from multivec.nugget.tables.uncertainty import statistics_lines
from multivec.statistics import statistics_note, table_statistics_from_units
from multivec.io import read_json
from multivec.nugget.lm_table3 import memory_positions_note, table3_markdown, table3_metrics, table3_rows
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p = snakemake.params
    results = {read_json(path)["row"]: read_json(path) for path in snakemake.input.results}
    results = {row: results[row] for row in p.rows}
    stats = table_statistics_from_units(snakemake.input.units, p.comparisons, p.statistics)
    df = stats.add_columns(pd.DataFrame(table3_rows(results, p.histories)), "row", table3_metrics(p.histories),
                           require=True)
    df.to_csv(snakemake.output.csv, index=False)
    stats.write_tests(snakemake.output.tests)
    segments = "all" if p.max_eval_segments is None else f"the first {p.max_eval_segments}"
    steps = "" if p.train_steps is None else f", each LM trained {p.train_steps} steps"
    scale_line = (f"Scale: **{p.scale}**, encoder `{p.encoder}`; {segments} {p.segment_tokens}-token test segments "
                  f"of `{p.eval_source}`{steps}; {memory_positions_note(p.memory_positions)}.\n\n"
                  + statistics_note(p.statistics["confidence"], p.seeds, "segments"))
    notes = statistics_lines(stats, snakemake.input.claims, {"nugget_table3": snakemake.input.units}, p.claims)
    markdown = table3_markdown(df.to_dict("records"), p.histories, scale_line, notes)
    Path(snakemake.output.md).write_text(markdown, encoding="utf-8")
    log.info("Table 3:\n%s", markdown)
