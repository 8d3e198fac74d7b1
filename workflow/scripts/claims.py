from multivec.statistics.claims import merge_claims, merge_comparisons, read_claims, read_comparisons, write_claims
from multivec.statistics.claims_file import load_claims
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p = snakemake.params
    s = p.statistics
    paths = dict(zip(p.works, snakemake.input.works))
    comparison_paths = dict(zip(p.works, snakemake.input.comparisons))
    frame = merge_claims({work: read_claims(path) for work, path in paths.items()},
                         load_claims(snakemake.input.claims_file), scale=s["scale"], where=paths)
    comparisons = merge_comparisons({work: read_comparisons(path) for work, path in comparison_paths.items()}, frame,
                                    where=comparison_paths)
    scale_line = (f"Scale: {s['scale']}; claim seeds {', '.join(map(str, p.seeds))}; alpha {s['alpha']}; "
                  f"{s['bootstrap_resamples']} bootstrap resamples, {s['permutation_resamples']} permutations.")
    write_claims(frame, snakemake.output.csv, snakemake.output.md, scale_line, changed_settings=p.paper_settings)
    comparisons.to_csv(snakemake.output.comparisons, index=False)
    log.info("%s", frame[["id", "verdict", "decided_by", "note"]].to_string(index=False))
