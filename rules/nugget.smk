# NUGGET (Qin & Van Durme 2023) and its TSDAE baseline: one rule trains one model.
# Training resumes from <model>/checkpoint/ if a previous run was killed.


rule train_nugget:
    input:
        train=lambda wc: corpus(wc.objective, "train"),
        dev=lambda wc: corpus(wc.objective, "dev"),
    output:
        weights="models/nugget/{objective}_r{ratio}/model.safetensors",
        config="models/nugget/{objective}_r{ratio}/config.json",
        summary="models/nugget/{objective}_r{ratio}/training_summary.json",
        metrics="models/nugget/{objective}_r{ratio}/metrics.csv",
    params:
        model=lambda wc: nugget_model_config(wc.objective, float(wc.ratio)),
        train=train_config(),
    log:
        "logs/train/nugget_{objective}_r{ratio}.log",
    benchmark:
        "benchmarks/rules/train/nugget_{objective}_r{ratio}.tsv"
    wildcard_constraints:
        objective="ae|mt",
        ratio="[0-9.]+",
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
        weights="models/tsdae/{objective}/model.safetensors",
        config="models/tsdae/{objective}/config.json",
        summary="models/tsdae/{objective}/training_summary.json",
        metrics="models/tsdae/{objective}/metrics.csv",
    params:
        model=lambda wc: tsdae_model_config(wc.objective),
        train=train_config(),
    log:
        "logs/train/tsdae_{objective}.log",
    benchmark:
        "benchmarks/rules/train/tsdae_{objective}.tsv"
    wildcard_constraints:
        objective="ae|mt",
    threads: rule_resources("train")["threads"]
    resources:
        mem_mb=rule_resources("train")["mem_mb"],
        runtime=rule_resources("train")["runtime"],
        gpu=rule_resources("train").get("gpu", 0),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/train_nugget.py"
