import os

from multivec.evaluation.table2_rows import evaluate_row, row_metrics, write_row_encodings
from multivec.io import write_json
from multivec.tasks.ranking_task import RankingTask
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    row = snakemake.params.row
    task = RankingTask.load(os.path.dirname(snakemake.input.task))
    encodings_dir = snakemake.output.encodings
    model_dir = os.path.dirname(snakemake.input.config) if "config" in snakemake.input.keys() else None
    write_row_encodings(row, task, encodings_dir, base_encoder=snakemake.params.base_encoder, model_dir=model_dir,
                        max_tokens=snakemake.params.max_tokens, batch_size=snakemake.params.batch_size)
    result = evaluate_row(row, task, encodings_dir)
    result.write_rankings(snakemake.output.rankings)
    metrics = row_metrics(row, snakemake.wildcards.task, result, encodings_dir)
    write_json(snakemake.output.metrics, metrics)
    log.info("%s on %s: MRR %.2f over %d queries", row["name"], snakemake.wildcards.task, result.mrr, result.n_queries)
