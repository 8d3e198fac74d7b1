# The representation matrix: every representation the project builds (BM25, the mean-pooled base encoder,
# ColBART, token pooling, NUGGET, TSDAE, the distilled students and teachers, the SubEncoder) against every
# task it applies to (PI, RR, Lee, polarity, PropSegment), with CIs and index bytes per document. Table 2's
# rows are scored here on the document tasks (Lee, polarity); every other cell is read from the works' own
# per-unit scores. The logic is multivec.evaluation.representation_matrix and multivec.rules.representations.

from multivec.rules.paths import DOCUMENT_TASKS, PROPSEGMENT_SPLIT, document_task_gold
from multivec.rules import representations as _representations

SUBENC_ENCODERS_OF_BACKBONES = {name: backbone["encoder"] for name, backbone in SUBENC_BACKBONES.items()}
DISTILL_ROW_NAMES = list(dict.fromkeys(e["name"] for e in distill_table_entries("tables")))  # one per row, not seed
register_stat_table("table2_document_tasks", "nugget", rows=TABLE2.document_task_rows("tables"),
                    metrics=["lee_pearson", "lee_spearman", "polarity_accuracy"])
register_stat_table("distill_propsegment", "distill",
                    rows=DISTILL_ROW_NAMES,
                    metrics=["P@1", "R@5"])
distill_propsegment_entries = lambda seedset: DISTILL_STUDENTS.propsegment_entries(seedset, PROPSEGMENT_SPLIT)
document_encoding_inputs = lambda wildcards: TABLE2.document_encoding_inputs(wildcards.encoder, DOCUMENT_TASKS)
MATRIX_REPRESENTATIONS = _representations.matrix_representations(
    ROWS, TABLE2.document_task_rows("tables"), config["base_encoder"], SUBENC_ENCODERS_OF_BACKBONES,
    SUBENCODER_WORK.layout.lexical, DISTILL_ROW_NAMES,
    subencoder_baselines=SUBENCODER_WORK.baselines)
MATRIX_SUBENCODER_EVALUATIONS = {e["row"]: e["path"] for e in subencoder_unit_entries("table1", "tables")
                                 if e["seed"] in (None, model_seeds("tables")[0])}
MATRIX_SIZES = _representations.size_sources(
    ROWS, MATRIX_REPRESENTATIONS,
    lambda name, task: TABLE2.encodings_dir(TABLE2.row_run(name, model_seeds("tables")[0]), task),
    {"PI": f"{task_dir('pi')}/docs.txt", "RR": f"{task_dir('rr')}/docs.txt"}, MATRIX_SUBENCODER_EVALUATIONS,
    "results/distill_table.csv", config["base_encoder"])


rule encode_documents:
    # The document tasks' documents (Lee, polarity) through one of Table 2's encoders (the base encoder or a
    # trained row's model): one job per encoder for both tasks.
    input:
        unpack(document_encoding_inputs),
    output:
        **{task: directory(f"data/encodings/{{encoder}}/{task}") for task in DOCUMENT_TASKS},
    params:
        tasks=DOCUMENT_TASKS,
        base_encoder=config["base_encoder"],
        max_tokens=config["table2"]["max_tokens"],
        batch_size=config["table2"]["encode_batch_size"],
        bf16=config["table2"]["bf16"],
    log:
        "logs/encode/{encoder}/document_tasks.log",
    benchmark:
        "benchmarks/rules/encode/{encoder}/document_tasks.tsv"
    wildcard_constraints:
        encoder=ENCODER_PATTERN,
    threads: family_threads("encode")
    resources:
        **family_resources("encode", gpu=True),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/encode_documents.py"


rule units_table2_document_tasks:
    # Per-unit scores of Table 2's vector rows on Lee (document pairs) and polarity (sentences).
    input:
        encodings=lambda wc: sorted({f for f, *_ in TABLE2.document_task_files(wc.seedset, DOCUMENT_TASKS)}),
        gold=[document_task_gold(task) for task in DOCUMENT_TASKS],
    output:
        units_path("table2_document_tasks", "{seedset}"),
    params:
        files=lambda wc: TABLE2.document_task_files(wc.seedset, DOCUMENT_TASKS),
        rows=ROWS,
    log:
        "logs/statistics/units_table2_document_tasks_{seedset}.log",
    benchmark:
        "benchmarks/rules/statistics/units_table2_document_tasks_{seedset}.tsv"
    wildcard_constraints:
        seedset="tables|claims",
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/document_task_units.py"


rule distill_propsegment_documents:
    # PropSegment dev's query and candidate propositions as texts (the token subset, App. C.1), one per line.
    input:
        **PROPSEGMENT_DEV,
    output:
        distill_documents(PROPSEGMENT_SPLIT),
    log:
        "logs/distill/propsegment_documents.log",
    benchmark:
        "benchmarks/rules/distill/propsegment_documents.tsv"
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/propsegment_documents.py"


rule paragraph_vector_propsegment:
    # The contextual teacher's vectors of the PropSegment texts: infer_vector from the saved variant.
    input:
        model=PV_MODEL,
        evaluation=[distill_documents(PROPSEGMENT_SPLIT)],
    output:
        evaluation=[directory(distill_teacher_dir("pv", "{variant}", PROPSEGMENT_SPLIT))],
    params:
        hash_seed=DISTILL["contextual_teacher"]["hash_seed"],
    wildcard_constraints:
        variant="|".join(map(re.escape, PV_VARIANTS)),
    log:
        "logs/distill/pv_{variant}_propsegment.log",
    benchmark:
        "benchmarks/rules/distill/pv_{variant}_propsegment.tsv"
    threads: 1
    resources:
        **family_resources("encode"),
    conda:
        "../envs/distill_teachers.yaml"
    script:
        "../workflow/scripts/distill_pv_embed.py"


rule units_distill_propsegment:
    # Per-query P@1 and R@5 of every distillation-table row on PropSegment (cosine of the propositions' texts).
    input:
        **PROPSEGMENT_DEV,
        embeddings=lambda wc: sorted({folder for _, _, folder in distill_propsegment_entries(wc.seedset)}),
    output:
        units_path("distill_propsegment", "{seedset}"),
    params:
        entries=lambda wc: distill_propsegment_entries(wc.seedset),
    log:
        "logs/statistics/units_distill_propsegment_{seedset}.log",
    benchmark:
        "benchmarks/rules/statistics/units_distill_propsegment_{seedset}.tsv"
    wildcard_constraints:
        seedset="tables|claims",
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/distill_propsegment_units.py"


rule representation_sizes:
    # Each representation's index size per task, measured where its encodings and documents are; committed, so
    # that the matrix re-renders from results/ alone.
    input:
        sorted({s["path"] for by_task in MATRIX_SIZES.values() for s in by_task.values()}),
    output:
        "results/representation_sizes.json",
    params:
        sizes=MATRIX_SIZES,
    log:
        "logs/representation_sizes.log",
    benchmark:
        "benchmarks/rules/representation_sizes.tsv"
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/representation_sizes.py"


rule representation_matrix:
    # Every representation against every task, each task on the units all its representations share.
    input:
        table2=units_path("table2", "tables"),
        table2_document_tasks=units_path("table2_document_tasks", "tables"),
        subencoder_table1=units_path("subencoder_table1", "tables"),
        distill_table=units_path("distill_table", "tables"),
        distill_propsegment=units_path("distill_propsegment", "tables"),
        table2_csv="results/table2.csv",  # the trained rows' sanity gates
        sizes="results/representation_sizes.json",
    output:
        csv=report("results/representations.csv", caption="../workflow/report/representations.rst",
                   category="Representations"),
        md=report("results/representations.md", caption="../workflow/report/representations.rst",
                  category="Representations"),
        figure=report("results/representations.png", caption="../workflow/report/representations.rst",
                      category="Representations"),
    params:
        table2_rows=ROWS,
        document_task_rows=TABLE2.document_task_rows("tables"),
        base_encoder=config["base_encoder"],
        subencoder_backbones=SUBENC_ENCODERS_OF_BACKBONES,
        subencoder_lexical=SUBENCODER_WORK.layout.lexical,
        subencoder_baselines=SUBENCODER_WORK.baselines,
        distill_rows=DISTILL_ROW_NAMES,
        statistics=statistics_params(),
        scale=config["scale"],
    log:
        "logs/representations.log",
    benchmark:
        "benchmarks/rules/representations.tsv"
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/representation_matrix.py"
