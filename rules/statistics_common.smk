# The statistics layer's file names and the table registry, shared by every work's rules (included
# before them). Each work registers its results tables with `register_stat_table`, so that the claims
# (rules/claims.smk) can check the rows and metrics they name before any job runs and find each
# table's per-unit scores.

STATS = config["statistics"]
SEEDSETS = ("tables", "claims")
# table name -> {"work", "rows", "metrics", "built"}
STAT_TABLES = {}


def model_seeds(seedset="tables"):
    """Training seeds of a seed set: `tables` (what results tables average) or `claims`."""
    return list(STATS["seeds"][seedset])


def units_path(table, seedset="tables"):
    """Per-unit scores of a table's rows over a seed set (multivec.statistics.units, Parquet)."""
    return f"data/statistics/units/{table}.{seedset}.parquet"


def register_stat_table(table, work, rows, metrics, built=True):
    """Declare a results table whose rule writes units_path(table, seedset) for both seed sets.

    rows / metrics: the names its unit files use (what claims and comparisons may name); built: False
    when this scale's configuration does not build the table (its claims are reported as not built)."""
    if table in STAT_TABLES:
        raise ValueError(f"statistics table {table!r} registered twice")
    STAT_TABLES[table] = {"work": work, "rows": list(rows), "metrics": list(metrics), "built": bool(built)}


def table_comparisons(table):
    """The row-vs-row comparisons declared for a table in statistics.comparisons (may be empty)."""
    return STATS["comparisons"].get(table, [])


def tests_report(path, category):
    """A table's paired comparisons (results/<table>_tests.csv), flagged for the report under its work."""
    return report(path, caption="../workflow/report/comparisons.rst", category=category)


def statistics_params():
    """Settings every table's statistics use (params of the table rules and the claims rule)."""
    return {key: STATS[key] for key in ("alpha", "confidence", "bootstrap_resamples", "permutation_resamples")}


def claims_file():
    """The claims as data (statistics.claims_file, relative to the workflow): an input of every rule
    that computes verdicts, so editing a claim reruns them."""
    path = STATS["claims_file"]
    return path if os.path.isabs(path) else os.path.join(workflow.basedir, path)


def skipped_claims():
    """{claim id: why} of statistics.skip_claims; a null reason (a later config file lifting a base
    file's skip) is not a skip."""
    return {k: v for k, v in (STATS.get("skip_claims") or {}).items() if v is not None}


def claims_params():
    """Params of a rule that computes verdicts (the claims rule, each table's Markdown)."""
    return {**statistics_params(), "scale": config["scale"], "skip": skipped_claims()}
