"""Rule subencoder_data_table7: Table 7 (App. A.4) from the per-sentence scores, with 95% bootstrap CIs
over sentences, the declared paired comparisons and the verdicts of the table's claims."""
from pathlib import Path

from multivec.io import read_json
from multivec.statistics.claims import table_verdict_lines
from multivec.subencoder.evaluation.segmentation_quality import OUR_COLUMNS, table7_warnings
from multivec.subencoder.tables.paper_tables import add_statistics, table7_frame, table7_markdown, training_segmenter_note
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p, out = snakemake.params, snakemake.output
    scores = read_json(snakemake.input.scores)
    table, stats = add_statistics(table7_frame(scores), snakemake.input.units,
                                  OUR_COLUMNS, p.statistics, p.comparisons)
    table.to_csv(out.csv, index=False)
    stats.write_tests(out.tests)
    verdicts = table_verdict_lines(snakemake.input.claims, {p.stat_table: snakemake.input.units}, p.claims)
    sections = [training_segmenter_note(p.training_segmenter, p.alignment), "", *table7_warnings(scores), "",
                *stats.markdown_tests(), "", *verdicts]
    Path(out.md).write_text(table7_markdown(table, p.scale_line, sections), encoding="utf-8")
    log.info("Table 7: %d rows, %d comparisons", len(table), len(stats.tests))
