# One DAG, three scales: demo (default, config/config.yaml), smoke (--configfile config/smoke.yaml),
# paper (--configfile config/paper.yaml). See README.md.
from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


validate(config, schema="config/schema.yaml")


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/nugget.smk"
include: "rules/table2.smk"


rule all:
    input:
        "results/table2.csv",
