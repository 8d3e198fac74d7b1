# Paper claims with computed verdicts (src/multivec/statistics/claims.py): every claim is
# evaluated on the per-unit scores of the claim seeds (statistics.seeds.claims); see rules/claims_common.smk.
# Each work's claims are evaluated on their own, so that rebuilding one work's claims trains only that work's
# models; `claims` joins them.


rule claims_of_work:
    # One row per claim of one work: the paper's numbers, ours with CIs over the claim seeds, the verdict and the
    # sub-test that decided it; and one row per sub-test of every evaluated claim (<work>_comparisons.csv).
    input:
        unpack(claims_units),
        claims_file=claims_file(),
    output:
        csv="results/claims/{work}.csv",
        comparisons="results/claims/{work}_comparisons.csv",
    params:
        tables=claims_tables,
        not_built=claims_not_built(),
        statistics=claims_params(),
    wildcard_constraints:
        work="|".join(CLAIM_WORKS),
    log:
        "logs/claims/{work}.log",
    benchmark:
        "benchmarks/rules/claims_of_work/{work}.tsv"
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/claims_of_work.py"


rule claims:
    # Every work's claims in the claims file's order, with the Markdown page, and every sub-test behind them.
    input:
        works=expand("results/claims/{work}.csv", work=CLAIM_WORKS),
        comparisons=expand("results/claims/{work}_comparisons.csv", work=CLAIM_WORKS),
        claims_file=claims_file(),
    output:
        csv=report("results/claims.csv", caption="../workflow/report/claims.rst", category="Claims"),
        md=report("results/claims.md", caption="../workflow/report/claims.rst", category="Claims"),
        comparisons=report("results/claims_comparisons.csv", caption="../workflow/report/claims.rst", category="Claims"),
    params:
        works=CLAIM_WORKS,
        statistics=claims_params(),
        seeds=model_seeds("claims"),
        paper_settings=paper_setting_differences,
    log:
        "logs/claims.log",
    benchmark:
        "benchmarks/rules/claims.tsv"
    threads: 1
    resources:
        **family_resources("build"),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/claims.py"
