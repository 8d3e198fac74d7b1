from multivec.statistics.claims import merge_claims, read_claims, write_claims
from multivec.statistics.claims_file import load_claims
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p = snakemake.params
    s = p.statistics
    paths = dict(zip(p.works, snakemake.input.works))
    frame = merge_claims({work: read_claims(path) for work, path in paths.items()},
                         load_claims(snakemake.input.claims_file), scale=s["scale"], where=paths)
    scale_line = (f"Scale: {s['scale']}; claim seeds {', '.join(map(str, p.seeds))}; alpha {s['alpha']}; "
                  f"{s['bootstrap_resamples']} bootstrap resamples, {s['permutation_resamples']} permutations.")
    write_claims(frame, snakemake.output.csv, snakemake.output.md, scale_line, changed_settings=p.paper_settings)
    log.info("%s", frame[["id", "verdict", "note"]].to_string(index=False))
