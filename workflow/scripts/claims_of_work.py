from multivec.statistics.claims import assess_claims
from multivec.statistics.claims_file import claims_of_work, load_claims
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p = snakemake.params
    s = p.statistics
    claims = claims_of_work(load_claims(snakemake.input.claims_file), snakemake.wildcards.work)
    results = assess_claims(claims, {table: snakemake.input[table] for table in p.tables},
                            scale=s["scale"], skip=s["skip"], not_built=p.not_built, alpha=s["alpha"],
                            confidence=s["confidence"], n_resamples=s["bootstrap_resamples"],
                            n_permutations=s["permutation_resamples"])
    results.claims.to_csv(snakemake.output.csv, index=False)
    results.comparisons.to_csv(snakemake.output.comparisons, index=False)
    log.info("%s", results.claims[["id", "verdict", "decided_by", "note"]].to_string(index=False))
