"""Table 3: word-level PPL of every LM row at each h, beside the paper's numbers."""
from pathlib import Path

from multivec.io import read_json, write_csv
from multivec.nugget.language_model import table3_markdown, table3_rows
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0]) as log:
    results = {Path(path).stem: read_json(path) for path in snakemake.input}
    results = {row: results[row] for row in snakemake.params.rows}
    p = snakemake.params
    rows = table3_rows(results, p.histories)
    write_csv(snakemake.output.csv, rows)
    segments = "all" if p.max_eval_segments is None else f"the first {p.max_eval_segments}"
    steps = "" if p.train_steps is None else f", each LM trained {p.train_steps} steps"
    scale_line = (f"Scale: **{p.scale}**, encoder `{p.encoder}`; {segments} {p.segment_tokens}-token test segments "
                  f"of `{p.eval_source}`{steps}.")
    markdown = table3_markdown(rows, p.histories, scale_line)
    Path(snakemake.output.md).write_text(markdown, encoding="utf-8")
    log.info("Table 3:\n%s", markdown)
