# The statistics layer's file names, seed sets and table registry, shared by every work's rules (included
# first). Each work registers its results tables with `register_stat_table`, so that the claims
# (rules/claims.smk) can check the rows and metrics they name before any job runs and find each
# table's per-unit scores. The logic is multivec.statistics.workflow_tables and multivec.rules.seed_sets;
# these bindings bind it to the config, the workflow and Snakemake's report().

from multivec.statistics import workflow_tables as _stat_tables
from multivec.rules.seed_sets import SeedSets

STATS = config["statistics"]
SEEDSETS = _stat_tables.SEEDSETS
# table name -> {"work", "rows", "metrics", "built"}
STAT_TABLES = _stat_tables.StatTables()
units_path = _stat_tables.units_path
# Declare a results table whose rule writes units_path(table, seedset) for both seed sets.
register_stat_table = STAT_TABLES.register
# The claims as data (statistics.claims_file, relative to the workflow): an input of every rule that computes
# verdicts, so editing a claim reruns them.
claims_file = lambda: _stat_tables.claims_file(STATS, workflow.basedir)
# Training seeds of a seed set (`tables`: what results tables average; `claims`), and the rows of a table's
# unit file over one (every row for `tables`; the rows a claim names for `claims`).
SEED_SETS = SeedSets(STATS, claims_file())
model_seeds = SEED_SETS.model_seeds
seedset_rows = SEED_SETS.rows
table_comparisons = lambda table: _stat_tables.table_comparisons(STATS, table)
statistics_params = lambda: _stat_tables.statistics_params(STATS)
skipped_claims = lambda: _stat_tables.skipped_claims(STATS)
claims_params = lambda: _stat_tables.claims_params(STATS, config["scale"])
# A table's paired comparisons (results/<table>_tests.csv), flagged for the report under its work.
tests_report = lambda path, category: report(path, caption="../workflow/report/comparisons.rst", category=category)
