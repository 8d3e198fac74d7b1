from multivec.statistics.claims import evaluate_claims, write_claims
from multivec.statistics.claims_file import load_claims
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p = snakemake.params
    s = p.statistics
    frame = evaluate_claims(load_claims(snakemake.input.claims_file),
                            {table: snakemake.input[table] for table in p.tables},
                            scale=s["scale"], skip=s["skip"], not_built=p.not_built, alpha=s["alpha"],
                            confidence=s["confidence"], n_resamples=s["bootstrap_resamples"],
                            n_permutations=s["permutation_resamples"])
    scale_line = (f"Scale: {s['scale']}; claim seeds {', '.join(map(str, p.seeds))}; alpha {s['alpha']}; "
                  f"{s['bootstrap_resamples']} bootstrap resamples, {s['permutation_resamples']} permutations.")
    write_claims(frame, snakemake.output.csv, snakemake.output.md, scale_line)
    log.info("%s", frame[["id", "verdict", "note"]].to_string(index=False))
