"""One Table 2 run's rankings scored by MTEB on the BEIR tasks: MTEB's result files (rules/interop.smk)."""
from pathlib import Path

from multivec.interop.mteb_tasks import main_score, write_mteb_results
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    tasks = list(snakemake.params.tasks)
    folder = Path(snakemake.output.folder)  # results/mteb/<model as path>/<revision>: MTEB's layout under results/mteb
    written = write_mteb_results(dict(zip(tasks, snakemake.input.runs)),
                                 dict(zip(tasks, snakemake.input.tasks)), folder.parent.parent,
                                 snakemake.params.name, snakemake.wildcards.revision, snakemake.params.model_type)
    for path in written:
        if path.parent != folder:
            raise RuntimeError(f"MTEB wrote {path}, outside the rule's output {folder}")
        log.info("%s: MRR %.4f", path, main_score(path))
