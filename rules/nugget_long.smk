# NUGGET models trained longer than Table 2's (config `nugget_analysis`), read by the analyses
# beyond Table 2: Fig. 4 (every ratio), Figs. 5-8 and 11, Table 3 (AE models), Table 4 (MT r = 0.1).
# r = 0 is the one-vector model (mean bottleneck with TSDAE's deletion noise).


rule train_nugget_long:
    input:
        train=lambda wc: corpus(wc.objective, "train"),
        dev=lambda wc: corpus(wc.objective, "dev"),
    output:
        **long_model_files("{objective}", "{ratio}", "{seed}"),
    params:
        model=lambda wc: long_model_config(wc.objective, wc.ratio, wc.seed),
        train=lambda wc: long_train_config(wc.seed),
    log:
        "logs/train/nugget_long_{objective}_r{ratio}_seed{seed}.log",
    benchmark:
        "benchmarks/rules/train/nugget_long_{objective}_r{ratio}_seed{seed}.tsv"
    wildcard_constraints:
        objective="ae|mt",
        ratio="[0-9.]+",
        seed=SEED_PATTERN,
    threads: rule_resources("train")["threads"]
    resources:
        mem_mb=rule_resources("train")["mem_mb"],
        runtime=rule_resources("train")["runtime"],
        gpu=rule_resources("train").get("gpu", 0),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/train_nugget.py"
