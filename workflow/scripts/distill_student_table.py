"""Snakemake script: teachers concatenated (rule distill_teachers_concat) or the distillation table
(rule distill_table), rules/distill.smk."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)  # noqa: F821

from multivec.distill.tables.main_table import build_rows, concatenate_embeddings, write_table  # noqa: E402
from multivec.io import read_json  # noqa: E402

params = snakemake.params  # noqa: F821
if params.action == "concat":
    concatenate_embeddings(list(snakemake.input), snakemake.output.folder)  # noqa: F821
else:
    table = build_rows(params.entries, params.tasks)
    write_table(table, params.tasks, snakemake.input.units, params.comparisons, params.statistics,  # noqa: F821
                snakemake.output.csv, snakemake.output.md, snakemake.output.tests, params.note,  # noqa: F821
                claims_file=snakemake.input.claims, claims=params.claims, entries=params.entries,  # noqa: F821
                frozen_checked=read_json(snakemake.input.frozen_check))  # noqa: F821
