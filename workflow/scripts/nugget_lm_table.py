"""Table 3: word-level PPL of every LM row at each h, beside the paper's numbers."""
from pathlib import Path

from multivec.io import read_json, write_csv
from multivec.nugget.language_model import table3_markdown, table3_rows
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0]) as log:
    results = {Path(path).stem: read_json(path) for path in snakemake.input}
    results = {row: results[row] for row in snakemake.params.rows}
    rows = table3_rows(results, snakemake.params.histories)
    write_csv(snakemake.output.csv, rows)
    Path(snakemake.output.md).write_text(table3_markdown(rows, snakemake.params.histories))
    log.info("Table 3:\n%s", table3_markdown(rows, snakemake.params.histories))
