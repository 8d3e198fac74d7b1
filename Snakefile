# One DAG, three scales: demo (default, config/config.yaml), smoke (--configfile config/smoke.yaml),
# paper (--configfile config/paper.yaml). See README.md.
import os

from snakemake.utils import min_version, validate

min_version("9.0")


# The demo config is the base of every run (also with --directory elsewhere); smoke.yaml and
# paper.yaml, given with --configfile, override parts of it.
configfile: os.path.join(workflow.basedir, "config", "config.yaml")


validate(config, schema="config/schema.yaml")


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/nugget.smk"
include: "rules/table2.smk"
include: "rules/audit.smk"


rule all:
    input:
        "results/table2.csv",
        "results/table1_tasks.csv",
