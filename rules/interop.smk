# The trained models and the rankings in the tools others use (docs/interop.md, "From the workflow"): the target
# `exports` (Snakefile), not part of `all`. Each trained model folder this scale builds and the library exports
# (Table 2's NUGGET and TSDAE rows, the distilled students, the SubEncoders) becomes a sentence-transformers folder
# exports/models/<name>/; each ranking evaluation of Table 2 a TREC run and qrels exports/trec/<run>/<task>.* (ties
# pessimistic: the project's MRR), each ranking of the PropSegment retrieval tables one in
# exports/trec/subencoder/<evaluation>/<ranking>.* (ties in candidate order: the project's P@1 and R@k), each
# task a BEIR folder exports/beir/<task>, and each run's rankings MTEB result files
# results/mteb/multivec__<row>/<revision>/ scored by MTEB itself; PropSegment's retrieval set a BEIR folder
# exports/beir/propsegment_<protocol> per Table 1 protocol (an MTEB task any sentence encoder runs on, its
# propositions as text); exports/manifest.tsv lists the models, and those
# skipped with the reason (paper scale's mBART NUGGET and T5 SubEncoders). The logic is multivec.rules.interop; the
# work multivec.interop.
from multivec.rules.interop import BEIR_TASK, MTEB_RESULTS, PROPSEGMENT_QRELS, PROPSEGMENT_RUN, TREC_RUN
from multivec.rules.interop import BEIR_PROPSEGMENT
from multivec.rules.interop import MANIFEST as EXPORT_MANIFEST
from multivec.rules.interop import PROPSEGMENT_RANKINGS, PROPSEGMENT_TIES
from multivec.rules.interop import TIES as EXPORT_TIES
from multivec.rules.interop import Exports, trec_run_name

EXPORTS = Exports(config, SEED_SETS)


rule export_model:
    # One trained model folder -> a sentence-transformers folder with a model card (the run's MRR for Table 2's rows).
    input:
        lambda wc: EXPORTS.model(wc.name).inputs,
        metrics=lambda wc: [path for _, path in EXPORTS.model(wc.name).metrics],
    output:
        folder=directory("exports/models/{name}"),
        metrics="exports/metrics/{name}.json",
    params:
        folder=lambda wc: EXPORTS.model(wc.name).folder,
        kind=lambda wc: EXPORTS.model(wc.name).kind,
        metrics=lambda wc: dict(EXPORTS.model(wc.name).metrics),
    log:
        "logs/exports/models/{name}.log",
    benchmark:
        "benchmarks/rules/exports/models/{name}.tsv"
    wildcard_constraints:
        name=EXPORTS.model_pattern(),
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/distill_teachers.yaml"
    script:
        "../workflow/scripts/export_model.py"


rule export_trec:
    # One ranking evaluation of Table 2 -> a TREC run and its qrels.
    input:
        rankings="results/table2/{run}/{task}.rankings.jsonl",
    output:
        run="exports/trec/{run}/{task}.run",
        qrels="exports/trec/{run}/{task}.qrels",
    params:
        ties=EXPORT_TIES,
        run_name=lambda wc: trec_run_name(wc.run, wc.task),
    log:
        "logs/exports/trec/{run}/{task}.log",
    benchmark:
        "benchmarks/rules/exports/trec/{run}/{task}.tsv"
    wildcard_constraints:
        task="pi|rr",
        run=RUN_PATTERN,
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/export_trec.py"


rule export_trec_propsegment:
    # One ranking of a PropSegment retrieval evaluation (Tables 1, 4, 5, 8) -> a TREC run and its qrels.
    input:
        rankings=PROPSEGMENT_RANKINGS,
    output:
        run=PROPSEGMENT_RUN,
        qrels=PROPSEGMENT_QRELS,
    params:
        ranking=lambda wc: EXPORTS.propsegment_run(wc.evaluation, wc.ranking).ranking,
        part=lambda wc: EXPORTS.propsegment_run(wc.evaluation, wc.ranking).part,
        run_name=lambda wc: EXPORTS.propsegment_run(wc.evaluation, wc.ranking).run_name,
        ties=PROPSEGMENT_TIES,
    log:
        "logs/exports/trec/subencoder/{evaluation}/{ranking}.log",
    benchmark:
        "benchmarks/rules/exports/trec/subencoder/{evaluation}/{ranking}.tsv"
    wildcard_constraints:
        **EXPORTS.propsegment_patterns(),
    threads: 1
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/export_trec_propsegment.py"


rule export_beir:
    # One ranking task (PI or RR) in BEIR's layout, with each query's candidates (a reranking task).
    input:
        docs=f"{task_dir('{task}')}/docs.txt",
        task=f"{task_dir('{task}')}/task.jsonl",
        meta=f"{task_dir('{task}')}/meta.json",
    output:
        folder=directory(BEIR_TASK),
    log:
        "logs/exports/beir/{task}.log",
    benchmark:
        "benchmarks/rules/exports/beir/{task}.tsv"
    wildcard_constraints:
        task="pi|rr",
    threads: 1
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/export_beir.py"


rule export_beir_propsegment:
    # PropSegment's retrieval set under one of Table 1's protocols in BEIR's layout, each proposition as its tokens'
    # text (App. C.1, token subset only), each query's candidates those the protocol leaves (a reranking task).
    input:
        **PROPSEGMENT_DEV,
    output:
        folder=directory(BEIR_PROPSEGMENT),
    log:
        "logs/exports/beir/propsegment_{protocol}.log",
    benchmark:
        "benchmarks/rules/exports/beir/propsegment_{protocol}.tsv"
    wildcard_constraints:
        protocol=EXPORTS.propsegment_protocol_pattern(),
    threads: 1
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/export_beir_propsegment.py"


rule export_mteb:
    # One Table 2 run's PI and RR rankings, scored by MTEB on the BEIR tasks: MTEB's result files.
    input:
        runs=lambda wc: [TREC_RUN.format(run=EXPORTS.mteb_export(wc.model, wc.revision).run, task=task)
                         for task in TASKS],
        tasks=expand(BEIR_TASK, task=TASKS),
    output:
        folder=directory(MTEB_RESULTS),
    params:
        tasks=TASKS,
        name=lambda wc: EXPORTS.mteb_export(wc.model, wc.revision).name,
        model_type=lambda wc: EXPORTS.mteb_export(wc.model, wc.revision).model_type,
    log:
        "logs/exports/mteb/{model}/{revision}.log",
    benchmark:
        "benchmarks/rules/exports/mteb/{model}/{revision}.tsv"
    wildcard_constraints:
        **EXPORTS.mteb_patterns(),
    threads: 1
    conda:
        "../envs/mteb.yaml"
    script:
        "../workflow/scripts/export_mteb.py"


rule export_manifest:
    # What `exports` writes: each model exported (where to) or skipped (why).
    output:
        EXPORT_MANIFEST,
    params:
        rows=EXPORTS.manifest_rows(),
    log:
        "logs/exports/manifest.log",
    benchmark:
        "benchmarks/rules/exports/manifest.tsv"
    threads: 1
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/export_manifest.py"
