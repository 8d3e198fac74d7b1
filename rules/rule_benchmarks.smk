# Runtime and peak memory per rule for the report (`snakemake --report`), from the jobs' benchmark:
# files (benchmarks/rules/**.tsv).
#
# Snakemake cannot make a rule depend on other rules' benchmark files: they are no rule's output. So this
# rule depends on every other target of `rule all` instead: every job of the DAG is upstream of one of
# them, so it runs after all of them have finished (their benchmark files written), and it reruns
# whenever one of them is rebuilt. It then reads the benchmark files present: this run's jobs and, for
# jobs that were already up to date, the run that built them (the CSV's last_written column says when).
# Each file is attributed to the rule whose declared benchmark pattern it matches (constraints included);
# files of no current rule are left out and logged. Library: multivec.pipeline.rule_benchmarks.
from multivec.pipeline.rule_benchmarks import declared_benchmarks as _declared_benchmarks

RULE_BENCHMARK_OUTPUTS = ["results/rule_benchmarks.csv", "results/rule_benchmarks.png"]


rule rule_benchmarks:
    input:
        lambda wildcards: [f for f in rules.all.input if f not in RULE_BENCHMARK_OUTPUTS],
    output:
        csv=report(
            RULE_BENCHMARK_OUTPUTS[0],
            caption="../workflow/report/rule_benchmarks.rst",
            category="Runtime and memory",
        ),
        png=report(
            RULE_BENCHMARK_OUTPUTS[1],
            caption="../workflow/report/rule_benchmarks.rst",
            category="Runtime and memory",
        ),
    params:
        folder="benchmarks/rules",
        declared=lambda wildcards: _declared_benchmarks(workflow.rules, workflow.basedir),
    log:
        "logs/rule_benchmarks.log",
    benchmark:
        "benchmarks/rules/rule_benchmarks.tsv"
    threads: 1
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/rule_benchmarks.py"
