# Table 3 (NUGGET §6.2, App. B.2): language modelling with compressed history. The LM streams are
# built once, one LM per row is trained from its `nugget_analysis` AE model, evaluated at h = 0 and each
# of `nugget_lm.histories`, and the table gathers the rows with the paper's numbers.

rule nugget_lm_streams:
    input:
        unpack(lm_stream_inputs),
    output:
        train=f"{LM_DIR}/train.jsonl",
        dev=f"{LM_DIR}/dev.jsonl",
        test=f"{LM_DIR}/test.jsonl",
    params:
        train_source=NUGGET_LM["train_source"],
        encoder=config["nugget"]["encoder"],  # its unknown token replaces <unk>
    log:
        "logs/build/nugget_lm_streams.log",
    benchmark:
        "benchmarks/rules/build/nugget_lm_streams.tsv"
    resources:
        **family_resources("build"),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/nugget_lm_streams.py"


rule train_nugget_lm:
    input:
        train=f"{LM_DIR}/train.jsonl",
        dev=f"{LM_DIR}/dev.jsonl",
        init=lambda wc: f"{lm_ae_model(wc.row, wc.seed)}/model.safetensors",
    output:
        weights="models/nugget_lm/{row}/seed{seed}/model.safetensors",
        config="models/nugget_lm/{row}/seed{seed}/config.json",
        summary="models/nugget_lm/{row}/seed{seed}/training_summary.json",
        metrics="models/nugget_lm/{row}/seed{seed}/metrics.csv",
    params:
        lm=lambda wc: lm_settings(wc.row),
        train=lambda wc: rule_settings({**train_config(wc.seed), **NUGGET_LM["train"]}),
        max_dev_segments=NUGGET_LM["max_dev_segments"],
        max_train_segments=NUGGET_LM["max_train_segments"],
    log:
        "logs/train/nugget_lm_{row}_seed{seed}.log",
    benchmark:
        "benchmarks/rules/train/nugget_lm_{row}_seed{seed}.tsv"
    wildcard_constraints:
        row="|".join(re.escape(r) for r in LM_ROWS),
        seed=SEED_PATTERN,
    threads: family_threads("train")
    resources:
        # the safety net is a resource, not a param, so raising it resumes (multivec.training.safety_net)
        max_minutes=lambda wc: safety_net_resource({**train_config(wc.seed), **NUGGET_LM["train"]}),
        **family_resources("train", gpu=True),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/nugget_lm_train.py"


rule evaluate_nugget_lm:
    input:
        model="models/nugget_lm/{row}/seed{seed}/model.safetensors",
        test=f"{LM_DIR}/test.jsonl",
    output:
        perplexity="results/nugget_lm/{row}/seed{seed}.json",
        history="results/nugget_lm/{row}/seed{seed}.history.safetensors",
        segments="results/nugget_lm/{row}/seed{seed}.segments.jsonl",
    params:
        histories=lm_histories(),
        max_segments=NUGGET_LM["max_eval_segments"],
        batch_size=NUGGET_LM["eval_batch_size"],
    log:
        "logs/evaluate/nugget_lm_{row}_seed{seed}.log",
    benchmark:
        "benchmarks/rules/evaluate/nugget_lm_{row}_seed{seed}.tsv"
    wildcard_constraints:
        row="|".join(re.escape(r) for r in LM_ROWS),
        seed=SEED_PATTERN,
    threads: family_threads("encode")
    resources:
        **family_resources("encode"),
        gpu=family_gpu("train"),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/nugget_lm_evaluate.py"


rule units_nugget_table3:
    # Per-segment word NLL and word counts of every LM at every h over a seed set (Table 3's CIs, claims).
    input:
        lambda wc: [f for f, *_ in lm_segment_files(wc.seedset)],
    output:
        units_path("nugget_table3", "{seedset}"),
    params:
        files=lambda wc: [keys for _, *keys in lm_segment_files(wc.seedset)],
        histories=lm_histories(),
    log:
        "logs/statistics/units_nugget_table3_{seedset}.log",
    benchmark:
        "benchmarks/rules/statistics/units_nugget_table3_{seedset}.tsv"
    wildcard_constraints:
        seedset="tables|claims",
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/nugget_lm_units.py"


rule nugget_table3:
    input:
        # the first tables seed's results name the rows and history kinds; the perplexities are seed means
        results=[f"results/nugget_lm/{row}/seed{model_seeds('tables')[0]}.json" for row in LM_ROWS],
        units=units_path("nugget_table3", "tables"),
        claims=claims_file(),
    output:
        csv=report("results/nugget_table3_lm.csv", caption="../workflow/report/nugget_table3_lm.rst", category="NUGGET"),
        md=report("results/nugget_table3_lm.md", caption="../workflow/report/nugget_table3_lm.rst", category="NUGGET"),
        tests=tests_report("results/nugget_table3_tests.csv", "NUGGET"),
    params:
        rows=list(LM_ROWS),
        histories=lm_histories(),
        seeds=model_seeds("tables"),
        statistics=statistics_params(),
        comparisons=table_comparisons("nugget_table3"),
        claims=claims_params(),
        scale=config["scale"],
        encoder=config["nugget"]["encoder"],
        eval_source=NUGGET_LM["eval_source"],
        max_eval_segments=NUGGET_LM["max_eval_segments"],
        segment_tokens=NUGGET_LM["segment_tokens"],
        train_steps={**train_config(), **NUGGET_LM["train"]}.get("max_steps"),
        memory_positions=NUGGET_LM["memory_positions"],
    log:
        "logs/results/nugget_table3_lm.log",
    benchmark:
        "benchmarks/rules/results/nugget_table3_lm.tsv"
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/nugget_lm_table.py"
