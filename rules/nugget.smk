# NUGGET (Qin & Van Durme 2023) and its TSDAE baseline: ONE model zoo (multivec.nugget.zoo).
# Every distinct (objective, r, scorer layer, selector, feedback, seed) trains once, by this one rule, into
# models/nugget/<objective>/<variant>/seed<seed>/; Table 2, Figs. 4-8 and 11, Table 3 (its AE models) and
# Table 4 read the folders they need (rules/common.smk: model_dir, long_model_dir; ablation_model_dir).
# Every model of an objective starts from that objective's shared r = 1 seq2seq model (variant base_r1,
# seed = the data seed), as the paper starts every model from mBART; the base itself starts from the
# pretrained encoder. Training resumes from <model>/checkpoint/ if a previous run was killed.


rule train_nugget:
    input:
        unpack(zoo_train_inputs),
    output:
        **zoo_files("{objective}", "{variant}", "{seed}"),
    params:
        model=lambda wc: zoo_model_config(wc.objective, wc.variant, wc.seed),
        train=lambda wc: rule_settings(zoo_train_config(wc.variant, wc.seed)),
    log:
        "logs/train/nugget/{objective}/{variant}/seed{seed}.log",
    benchmark:
        "benchmarks/rules/train/nugget/{objective}/{variant}/seed{seed}.tsv"
    wildcard_constraints:
        objective="ae|mt",
        variant=ZOO_VARIANT_PATTERN,
        seed=SEED_PATTERN,
    threads: family_threads("train")
    resources:
        # the safety net is a resource, not a param, so raising it resumes (multivec.training.safety_net)
        max_minutes=lambda wc: safety_net_resource(zoo_train_config(wc.variant, wc.seed)),
        **family_resources("train", gpu=True),
    conda:
        "../envs/train.yaml"
    script:
        "../workflow/scripts/train_nugget.py"


rule nugget_base_gate:
    # Sanity gates of the shared r = 1 model: it must reconstruct (AE) the first dev documents at
    # BLEU >= nugget_base.gate.min_bleu, and its best dev loss must be below the unigram entropy of its targets.
    input:
        dev=lambda wc: corpus(wc.objective, "dev"),
        **zoo_files("{objective}", _zoo.BASE_VARIANT, BASE_SEED),
    output:
        "results/nugget_base/{objective}_gate.json",
    params:
        gate=config["nugget_base"]["gate"],
    log:
        "logs/nugget_base/{objective}_gate.log",
    benchmark:
        "benchmarks/rules/nugget_base/{objective}_gate.tsv"
    wildcard_constraints:
        objective="ae|mt",
    threads: family_threads("encode")
    resources:
        **family_resources("encode", gpu=True),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_base_gate.py"


rule nugget_memory_use:
    # Does the decoder read the nuggets? (multivec.nugget.analysis.memory_use): dev loss with each
    # document's own memory vs another document's, and (AE) by distance to the nearest nugget.
    input:
        models=[f"{m['folder']}/model.safetensors" for m in memory_use_models().values()],
        dev=sorted({corpus(m["objective"], "dev") for m in memory_use_models().values()}),
    output:
        csv=report("results/nugget_memory_use.csv", caption="../workflow/report/nugget_memory_use.rst",
                   category="NUGGET"),
        md=report("results/nugget_memory_use.md", caption="../workflow/report/nugget_memory_use.rst",
                  category="NUGGET"),
    params:
        models=memory_use_models(),
        dev={objective: corpus(objective, "dev") for objective in ("ae", "mt")},
        settings=config["nugget_analysis"]["memory_use"],
        statistics=statistics_params(),
    log:
        "logs/nugget_base/memory_use.log",
    benchmark:
        "benchmarks/rules/nugget_base/memory_use.tsv"
    threads: family_threads("encode")
    resources:
        **family_resources("encode", gpu=True),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/nugget_memory_use.py"
