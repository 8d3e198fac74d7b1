from pathlib import Path

from multivec.nugget.tables.table1 import assemble_table1, table1_markdown, unknown_tokens_of, write_table1
from multivec.io import META_FILE, read_json
from multivec.tasks.ranking_task import RankingTask
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p = snakemake.params
    metas = {task: Path(folder) / META_FILE for task, folder in p.tasks.items()}
    unknown = {task: unknown_tokens_of(read_json(path), str(path)) for task, path in metas.items()}
    df = assemble_table1({task: (p.sources[task], RankingTask.load(folder)) for task, folder in p.tasks.items()},
                         unknown)
    write_table1(df, snakemake.output.csv, snakemake.output.md)
    log.info("\n%s", table1_markdown(df))
