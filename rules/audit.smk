# Train/test overlap audit: every training corpus (AUDIT_CORPORA) against every evaluation
# task (AUDIT_TASKS), word 8-grams; fails the run when a task document shares more than
# audit.max_document_share of its 8-grams with a training corpus. And Table 1 of NUGGET:
# the tasks' sizes and lengths beside the paper's.


rule overlap_audit:
    input:
        audit_inputs(),
    output:
        csv=report("results/overlap.csv", caption="../workflow/report/overlap.rst", category="Data"),
        md=report("results/overlap.md", caption="../workflow/report/overlap.rst", category="Data"),
    params:
        corpora=AUDIT_CORPORA,
        tasks=AUDIT_TASKS,
        settings=config["audit"],
    log:
        "logs/audit/overlap.log",
    benchmark:
        "benchmarks/rules/audit/overlap.tsv"
    threads: 1
    resources:
        **family_resources("build"),
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/overlap_audit.py"


rule table1_tasks:
    # NUGGET Table 1: queries, mean query and document length (whitespace tokens), unknown-token share per task.
    input:
        [f"{task_dir(task)}/{name}" for task in TASKS for name in ("docs.txt", "task.jsonl", "meta.json")],
    output:
        csv=report("results/table1_tasks.csv", caption="../workflow/report/table1_tasks.rst", category="NUGGET"),
        md=report("results/table1_tasks.md", caption="../workflow/report/table1_tasks.rst", category="NUGGET"),
    params:
        tasks={task: task_dir(task) for task in TASKS},
        sources={task: config["table2"][task]["source"] for task in TASKS},
    log:
        "logs/table1_tasks.log",
    benchmark:
        "benchmarks/rules/table1_tasks.tsv"
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/table1.py"
