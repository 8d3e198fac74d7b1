from multivec.evaluation.table1 import assemble_table1, table1_markdown, write_table1
from multivec.tasks.ranking_task import RankingTask
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p = snakemake.params
    df = assemble_table1({task: (p.sources[task], RankingTask.load(folder)) for task, folder in p.tasks.items()})
    write_table1(df, snakemake.output.csv, snakemake.output.md)
    log.info("\n%s", table1_markdown(df))
