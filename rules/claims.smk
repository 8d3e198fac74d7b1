# Paper claims with computed verdicts (issue 17; src/multivec/statistics/claims.py): every claim is
# evaluated on the per-unit scores of the claim seeds (statistics.seeds.claims); see rules/claims_common.smk.


rule claims:
    # One row per claim: the paper's numbers, ours with CIs over the claim seeds, the verdict.
    input:
        unpack(claims_units),
        claims_file=claims_file(),
    output:
        csv=report("results/claims.csv", caption="../workflow/report/claims.rst", category="Claims"),
        md=report("results/claims.md", caption="../workflow/report/claims.rst", category="Claims"),
    params:
        tables=list(claims_units()),
        not_built=claims_not_built(),
        statistics=claims_params(),
        seeds=model_seeds("claims"),
    log:
        "logs/claims.log",
    benchmark:
        "benchmarks/rules/claims.tsv"
    threads: rule_resources("build")["threads"]
    resources:
        mem_mb=rule_resources("build")["mem_mb"],
        runtime=rule_resources("build")["runtime"],
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/claims.py"
