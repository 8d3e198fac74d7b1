import os

from multivec.evaluation.table2_rows import evaluate_row, row_metrics
from multivec.io import write_json
from multivec.tasks.ranking_task import RankingTask
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0]) as log:
    row = {"name": snakemake.wildcards.row, "kind": "bm25"}
    task = RankingTask.load(os.path.dirname(snakemake.input.task))
    result = evaluate_row(row, task, None)
    result.write_rankings(snakemake.output.rankings)
    write_json(snakemake.output.metrics, row_metrics(row, snakemake.wildcards.task, result, None))
    log.info("BM25 on %s: MRR %.2f over %d queries", snakemake.wildcards.task, result.mrr, result.n_queries)
