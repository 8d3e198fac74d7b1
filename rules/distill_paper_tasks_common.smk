# Config look-ups and paths of the paper-scale distillation tasks (rules/distill_paper_tasks.smk): IMDB's
# document sets, the saved Paragraph Vector models, the table's rows, DISTILL_PAPER_TARGETS for rule all and
# the IMDB audit registration. Functions live here, apart from the rules (snakemake --lint).
DISTILL_PAPER = DISTILL.get("paper_tasks") or {"enabled": False}
IMDB_SPLITS = {"train": "eval_imdb_train", "test": "eval_imdb_test"}
IMDB_DOCUMENTS = {part: distill_documents(split) for part, split in IMDB_SPLITS.items()}
DISTILL_PAPER_TARGETS = ["results/distill_imdb.csv", "results/distill_imdb.md"] if DISTILL_PAPER["enabled"] else []


def distill_imdb_rows(seedset="tables"):
    """{row name: {"kind", "seeds": {seed tag: {train|test: embeddings folder}}}}: the teachers' grid, the teachers
    concatenated, the untrained student (seed tag "fixed": deterministic) and every trained student at each seed
    of model_seeds(seedset) (seed tag "seed<seed>")."""
    def folders(path_of):
        return {part: path_of(split) for part, split in IMDB_SPLITS.items()}

    rows = {f"sbert_{m}": {"kind": "structural_teacher",
                           "seeds": {"fixed": folders(lambda s, m=m: distill_teacher_dir("sbert", m, s))}}
            for m in SBERT_MODELS}
    rows.update({f"pv_{v}": {"kind": "contextual_teacher",
                             "seeds": {"fixed": folders(lambda s, v=v: distill_teacher_dir("pv", v, s))}}
                 for v in PV_VARIANTS})
    rows["teachers_concatenated"] = {"kind": "teachers_concatenated",
                                     "seeds": {"fixed": folders(lambda s: f"data/distill/concat/{s}")}}
    rows["student_untrained"] = {"kind": "untrained_student",
                                 "seeds": {"fixed": folders(lambda s: DISTILL_UNTRAINED_EMBEDDINGS.format(split=s))}}
    for run in distill_runs():
        rows[f"student_{run}"] = {"kind": "student", "seeds": {
            f"seed{seed}": folders(lambda s, r=run, k=seed: DISTILL_STUDENT_EMBEDDINGS.format(run=r, seed=k, split=s))
            for seed in model_seeds(seedset)}}
    return rows


def distill_imdb_folders(row, seeding):
    """{train|test: embeddings folder} of one row at one seed tag (of either seed set)."""
    return {**distill_imdb_rows("tables")[row]["seeds"], **distill_imdb_rows("claims")[row]["seeds"]}[seeding]


DISTILL_IMDB_RESULT = "results/distill_imdb/{row}/{seeding}"  # .json (the row) and .reviews.jsonl (per review)


def distill_imdb_results(seedset, suffix):
    return [DISTILL_IMDB_RESULT.format(row=row, seeding=tag) + suffix
            for row, spec in distill_imdb_rows(seedset).items() for tag in spec["seeds"]]


def distill_imdb_unit_entries(seedset):
    """The IMDB rows as entries of their unit file (multivec.distill.tables.imdb_table.imdb_measurements)."""
    return [{"name": row, "seed": None if tag == "fixed" else int(tag[len("seed"):]),
             "reviews": DISTILL_IMDB_RESULT.format(row=row, seeding=tag) + ".reviews.jsonl"}
            for row, spec in distill_imdb_rows(seedset).items() for tag in spec["seeds"]]


def distill_imdb_head_config(seeding):
    """The head's settings; a trained student's head is seeded with the student's seed, the others with the
    config seed (so a seed-to-seed SD covers both the student's and its head's training)."""
    seed = config["seed"] if seeding == "fixed" else int(seeding[len("seed"):])
    return {**DISTILL_PAPER.get("head", {}), "seed": seed}


register_stat_table("distill_imdb", "distill", rows=list(distill_imdb_rows()), metrics=["imdb_accuracy"],
                    built=DISTILL_PAPER["enabled"])


if DISTILL_PAPER["enabled"]:
    # Overlap audit (rules/audit.smk): the distillation training documents against IMDB test.
    AUDIT_TASKS["distill_imdb"] = {"format": "text_jsonl", "files": [IMDB_DOCUMENTS["test"]]}
