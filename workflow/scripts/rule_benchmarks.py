from multivec.pipeline.rule_benchmarks import write_rule_benchmarks
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    summary = write_rule_benchmarks(snakemake.params.folder, snakemake.params.declared, snakemake.output.csv,
                                    snakemake.output.png)
    log.info("%d jobs of %d rules, %.0f job-seconds", summary["jobs"], summary["rules"], summary["total_s"])
    if summary["unmatched"]:
        log.warning("%d benchmark files match no rule of this workflow (left out), e.g. %s",
                    len(summary["unmatched"]), ", ".join(summary["unmatched"][:5]))
