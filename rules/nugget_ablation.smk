# NUGGET Table 4 (§7.1): ablations of the scorer layer l, the feedback and the selector, plus a random
# selector the paper lacks; MT objective, r = 0.1, the longer training regime of `nugget_analysis`.
# NUGGET (l = 3) is models/nugget_long/mt_r0.1 (rules/nugget_long.smk); the others train into
# models/nugget_ablation/<name>/. Each row is encoded and ranked with Table 2's evaluation.
# Helpers: rules/nugget_ablation_common.smk.


rule sentence_final_share:
    # r_sb: the share of sentence-final source tokens of the MT training corpus (§7.1: 3.3% in the paper).
    input:
        corpus("mt", "train"),
    output:
        SENTENCE_SHARE,
    params:
        model=lambda wc: long_model_config("mt", "0.1"),
    log:
        "logs/nugget_ablation/sentence_final_share.log",
    benchmark:
        "benchmarks/rules/nugget_ablation/sentence_final_share.tsv"
    threads: rule_resources("build")["threads"]
    resources:
        mem_mb=rule_resources("build")["mem_mb"],
        runtime=rule_resources("build")["runtime"],
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/nugget_ablation_share.py"


rule train_nugget_ablation:
    input:
        train=corpus("mt", "train"),
        dev=corpus("mt", "dev"),
        sentence_share=lambda wc: SENTENCE_SHARE if ablation_uses_sentence_share(wc.name) else [],
    output:
        weights="models/nugget_ablation/{name}/model.safetensors",
        config="models/nugget_ablation/{name}/config.json",
        summary="models/nugget_ablation/{name}/training_summary.json",
        metrics="models/nugget_ablation/{name}/metrics.csv",
    params:
        model=lambda wc: ablation_model_config(wc.name),
        train=long_train_config(),
    log:
        "logs/train/nugget_ablation_{name}.log",
    benchmark:
        "benchmarks/rules/train/nugget_ablation_{name}.tsv"
    wildcard_constraints:
        name="|".join(re.escape(n) for n in ABLATION_TRAINED) or "(?!)",
    threads: rule_resources("train")["threads"]
    resources:
        mem_mb=rule_resources("train")["mem_mb"],
        runtime=rule_resources("train")["runtime"],
        gpu=rule_resources("train").get("gpu", 0),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/train_nugget.py"


rule encode_nugget_ablation:
    # Table 2's encoding; the sentence-boundary row gets each document's punkt sentence ends.
    input:
        unpack(ablation_encoding_inputs),
    output:
        directory("data/encodings/nugget_ablation/{name}/{task}"),
    params:
        max_tokens=config["table2"]["max_tokens"],
        batch_size=config["table2"]["encode_batch_size"],
        bf16=config["table2"]["bf16"],
    log:
        "logs/encode/nugget_ablation/{name}/{task}.log",
    benchmark:
        "benchmarks/rules/encode/nugget_ablation/{name}/{task}.tsv"
    wildcard_constraints:
        task="pi|rr",
        name=ABLATION_PATTERN,
    threads: rule_resources("encode")["threads"]
    resources:
        mem_mb=rule_resources("encode")["mem_mb"],
        runtime=rule_resources("encode")["runtime"],
        gpu=rule_resources("encode").get("gpu", 0),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_ablation_encode.py"


rule evaluate_nugget_ablation:
    # Table 2's ranking (MaxSim-mean over the nuggets, eq. 10).
    input:
        docs=f"{task_dir('{task}')}/docs.txt",
        task=f"{task_dir('{task}')}/task.jsonl",
        encodings="data/encodings/nugget_ablation/{name}/{task}",
    output:
        metrics="results/nugget_table4/{name}/{task}.json",
        rankings="results/nugget_table4/{name}/{task}.rankings.jsonl",
    params:
        row=lambda wc: {"name": wc.name, "kind": "nugget"},
    log:
        "logs/evaluate/nugget_ablation/{name}/{task}.log",
    benchmark:
        "benchmarks/rules/evaluate/nugget_ablation/{name}/{task}.tsv"
    wildcard_constraints:
        task="pi|rr",
        name=ABLATION_PATTERN,
    threads: rule_resources("encode")["threads"]
    resources:
        mem_mb=rule_resources("encode")["mem_mb"],
        runtime=rule_resources("encode")["runtime"],
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/evaluate_ranking.py"


rule nugget_table4:
    input:
        evaluations=expand("results/nugget_table4/{name}/{task}.json", name=ABLATION_ROWS, task=TASKS),
        configs=[ablation_model_files(n)["config"] for n in ABLATION_ROWS],
        summaries=[ablation_model_files(n)["summary"] for n in ABLATION_ROWS],
        share=SENTENCE_SHARE,
    output:
        csv="results/nugget_table4_ablations.csv",
        md="results/nugget_table4_ablations.md",
    params:
        rows=ABLATION_ROWS,
        model_dirs={n: ablation_model_dir(n) for n in ABLATION_ROWS},
        scale=config["scale"],
        nugget_encoder=config["nugget"]["encoder"],
        layers=ABLATION_LAYERS,
    log:
        "logs/nugget_table4.log",
    benchmark:
        "benchmarks/rules/nugget_table4.tsv"
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_ablation_table.py"
