# The statistics layer's file names and the table registry, shared by every work's rules (included
# before them). Each work registers its results tables with `register_stat_table`, so that the claims
# (rules/claims.smk) can check the rows and metrics they name before any job runs and find each
# table's per-unit scores. The logic is multivec.statistics.workflow_tables; these wrappers bind it to
# the config, the workflow and Snakemake's report().

from multivec.statistics import workflow_tables as _stat_tables

STATS = config["statistics"]
SEEDSETS = _stat_tables.SEEDSETS
# table name -> {"work", "rows", "metrics", "built"}
STAT_TABLES = _stat_tables.StatTables()
units_path = _stat_tables.units_path


def model_seeds(seedset="tables"):
    """Training seeds of a seed set: `tables` (what results tables average) or `claims`."""
    return _stat_tables.model_seeds(STATS, seedset)


def register_stat_table(table, work, rows, metrics, built=True):
    """Declare a results table whose rule writes units_path(table, seedset) for both seed sets
    (StatTables.register)."""
    STAT_TABLES.register(table, work, rows, metrics, built)


def table_comparisons(table):
    """The row-vs-row comparisons declared for a table in statistics.comparisons (may be empty)."""
    return _stat_tables.table_comparisons(STATS, table)


def tests_report(path, category):
    """A table's paired comparisons (results/<table>_tests.csv), flagged for the report under its work."""
    return report(path, caption="../workflow/report/comparisons.rst", category=category)


def statistics_params():
    """Settings every table's statistics use (params of the table rules and the claims rule)."""
    return _stat_tables.statistics_params(STATS)


def claims_file():
    """The claims as data (statistics.claims_file, relative to the workflow): an input of every rule
    that computes verdicts, so editing a claim reruns them."""
    return _stat_tables.claims_file(STATS, workflow.basedir)


def skipped_claims():
    """{claim id: why} of statistics.skip_claims; a null reason is not a skip."""
    return _stat_tables.skipped_claims(STATS)


def claims_params():
    """Params of a rule that computes verdicts (the claims rule, each table's Markdown)."""
    return _stat_tables.claims_params(STATS, config["scale"])
