# The claims (statistics.claims_file), read and checked against the tables the works registered
# (rules/statistics_common.smk) before any job: a claim naming an unknown table, row or metric stops the
# run here, naming it. Included after every work's rules, so that every table is registered. The logic is
# multivec.statistics.workflow_tables and claims_file; these bindings bind it to the config.

from multivec.statistics.claims_file import check_claim_origins as _check_claim_origins
from multivec.statistics.claims_file import check_claims as _check_claims
from multivec.statistics.claims_file import claim_works as _claim_works
from multivec.statistics.claims_file import load_claims as _load_claims
from multivec.rules.paper_settings import differences as _paper_setting_differences

# load_claims refuses a margin, delta or level without its source; every claim states its origin (paper | ours).
CLAIMS = _load_claims(claims_file())
_check_claim_origins(CLAIMS, where=STATS["claims_file"])
_check_claims(CLAIMS, STAT_TABLES, skipped_claims(), where=STATS["claims_file"])
# The works whose claims results/claims/<work>.csv evaluates, in the claims file's order.
CLAIM_WORKS = _claim_works(CLAIMS)
# {table: unit file over the claim seeds} of every table that a claim of the work reads and this scale builds.
claims_units = lambda wildcards: _stat_tables.claims_units(CLAIMS, wildcards.work, STAT_TABLES, skipped_claims(),
                                                           "claims")
# The tables of claims_units, in its order (the script's names for the unit files).
claims_tables = lambda wildcards: list(claims_units(wildcards))
# {table: why} for the tables a claim reads that this scale does not build.
claims_not_built = lambda: STAT_TABLES.not_built(config["scale"])
# At paper scale, each audited setting this run changes (docs/paper_settings.md), for claims.md; empty elsewhere.
paper_setting_differences = lambda wildcards: _paper_setting_differences(
    config, os.path.join(workflow.basedir, "docs", "paper_settings.md"))
