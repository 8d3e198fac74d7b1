# Config look-ups and paths of the paper-scale distillation tasks (rules/distill_paper_tasks.smk): IMDB's
# document sets, the saved Paragraph Vector models, the table's rows, DISTILL_PAPER_TARGETS for rule all and
# the IMDB audit registration. Functions live here, apart from the rules (snakemake --lint).
DISTILL_PAPER = DISTILL.get("paper_tasks") or {"enabled": False}
IMDB_SPLITS = {"train": "eval_imdb_train", "test": "eval_imdb_test"}
IMDB_DOCUMENTS = {part: distill_documents(split) for part, split in IMDB_SPLITS.items()}
DISTILL_PAPER_TARGETS = ["results/distill_imdb.csv", "results/distill_imdb.md"] if DISTILL_PAPER["enabled"] else []


def distill_imdb_rows():
    """{row name: {"kind", "embeddings": {train|test: embeddings folder}}}: the teachers' grid, the teachers
    concatenated, the untrained student and every trained student (the rows of results/distill_table.csv)."""
    def folders(path_of):
        return {part: path_of(split) for part, split in IMDB_SPLITS.items()}

    rows = {f"sbert_{m}": {"kind": "structural_teacher",
                           "embeddings": folders(lambda s, m=m: distill_teacher_dir("sbert", m, s))}
            for m in SBERT_MODELS}
    rows.update({f"pv_{v}": {"kind": "contextual_teacher",
                             "embeddings": folders(lambda s, v=v: distill_teacher_dir("pv", v, s))}
                 for v in PV_VARIANTS})
    rows["teachers_concatenated"] = {"kind": "teachers_concatenated",
                                     "embeddings": folders(lambda s: f"data/distill/concat/{s}")}
    for run in ["untrained", *distill_runs()]:
        rows[f"student_{run}"] = {"kind": "untrained_student" if run == "untrained" else "student",
                                  "embeddings": folders(lambda s, r=run: DISTILL_STUDENT_EMBEDDINGS.format(run=r, split=s))}
    return rows


if DISTILL_PAPER["enabled"]:
    # Overlap audit (rules/audit.smk): the distillation training documents against IMDB test.
    AUDIT_TASKS["distill_imdb"] = {"format": "text_jsonl", "files": [IMDB_DOCUMENTS["test"]]}
