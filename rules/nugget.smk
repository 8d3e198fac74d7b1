# NUGGET (Qin & Van Durme 2023) and its TSDAE baseline: one rule trains one model.
# Training resumes from <model>/checkpoint/ if a previous run was killed. Every model is trained at
# one training seed ({seed}: statistics.seeds), which sits in its folder and its model/train config.


rule train_nugget:
    input:
        train=lambda wc: corpus(wc.objective, "train"),
        dev=lambda wc: corpus(wc.objective, "dev"),
    output:
        weights="models/nugget/{objective}_r{ratio}/seed{seed}/model.safetensors",
        config="models/nugget/{objective}_r{ratio}/seed{seed}/config.json",
        summary="models/nugget/{objective}_r{ratio}/seed{seed}/training_summary.json",
        metrics="models/nugget/{objective}_r{ratio}/seed{seed}/metrics.csv",
    params:
        model=lambda wc: nugget_model_config(wc.objective, float(wc.ratio), wc.seed),
        train=lambda wc: train_config(wc.seed),
    log:
        "logs/train/nugget_{objective}_r{ratio}_seed{seed}.log",
    benchmark:
        "benchmarks/rules/train/nugget_{objective}_r{ratio}_seed{seed}.tsv"
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


rule train_tsdae:
    input:
        train=lambda wc: corpus(wc.objective, "train"),
        dev=lambda wc: corpus(wc.objective, "dev"),
    output:
        weights="models/tsdae/{objective}/seed{seed}/model.safetensors",
        config="models/tsdae/{objective}/seed{seed}/config.json",
        summary="models/tsdae/{objective}/seed{seed}/training_summary.json",
        metrics="models/tsdae/{objective}/seed{seed}/metrics.csv",
    params:
        model=lambda wc: tsdae_model_config(wc.objective, wc.seed),
        train=lambda wc: train_config(wc.seed),
    log:
        "logs/train/tsdae_{objective}_seed{seed}.log",
    benchmark:
        "benchmarks/rules/train/tsdae_{objective}_seed{seed}.tsv"
    wildcard_constraints:
        objective="ae|mt",
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
