import os

from multivec.nugget.tables.table2_rows import evaluate_row, row_encodings, row_metrics
from multivec.io import write_json
from multivec.tasks.ranking_task import RankingTask
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    row = snakemake.params.row
    task = RankingTask.load(os.path.dirname(snakemake.input.task))
    folder = snakemake.input.get("encodings")  # BM25 has none
    encodings = row_encodings(row, folder) if folder else None  # read once: ColBART's PI states are large
    result = evaluate_row(row, task, encodings)
    result.write_rankings(snakemake.output.rankings)
    write_json(snakemake.output.metrics, row_metrics(row, snakemake.wildcards.task, result, encodings,
                                                        snakemake.params.seed))
    log.info("%s on %s: MRR %.2f over %d queries", row["name"], snakemake.wildcards.task, result.mrr, result.n_queries)
