# Path helpers and config look-ups of the distillation student's rules (rules/distill.smk).
#
# Interface with rules/distill_teachers.smk (the teachers' side of issue 9), in one place here:
# documents data/built/distill/{train,eval_<task>}.jsonl; teacher embeddings folders below.
DISTILL_DOCUMENTS = "data/built/distill/{split}.jsonl"
DISTILL_STUDENT_EMBEDDINGS = "data/distill/student/{run}/{split}"


def distill_tasks():
    """The demo evaluation tasks (the teachers' side owns distill.evaluation)."""
    return list(config["distill"]["evaluation"]["tasks"])


def distill_task_files(task):
    """What evaluate_embeddings needs beside the embeddings: the task's documents file."""
    return {"documents": DISTILL_DOCUMENTS.format(split=f"eval_{task}")}


def distill_runs():
    """{run name: loss settings}: L_S only, then L_C only and both for each contextual loss."""
    loss, runs = config["distill"]["loss"], config["distill"]["runs"]
    out = {f"ls_{loss['structural']}": {**loss, "contextual": None}}
    for variant in runs["contextual_losses"]:
        out[f"lc_{variant}"] = {**loss, "structural": None, "contextual": variant}
        out[f"ls_{loss['structural']}+lc_{variant}"] = {**loss, "contextual": variant}
    return out


def distill_student_config():
    student = {k: v for k, v in config["distill"]["student"].items() if k != "embed_batch_size"}
    return {**student, "seed": config["seed"]}


def distill_teacher(side, split):
    """The chosen teacher's embeddings (distill.structural_teacher.teacher / contextual_teacher.teacher)."""
    return structural_teacher_dir(split) if side == "structural" else contextual_teacher_dir(split)


def distill_table_rows():
    tasks = distill_tasks()
    rows = [
        {"name": f"sbert_{DISTILL['structural_teacher']['teacher']}", "kind": "structural_teacher",
         "embeddings": {t: distill_teacher("structural", f"eval_{t}") for t in tasks}},
        {"name": f"pv_{DISTILL['contextual_teacher']['teacher']}", "kind": "contextual_teacher",
         "embeddings": {t: distill_teacher("contextual", f"eval_{t}") for t in tasks}},
        {"name": "teachers_concatenated", "kind": "teachers_concatenated",
         "embeddings": {t: f"data/distill/concat/eval_{t}" for t in tasks}},
        {"name": "student_untrained", "kind": "untrained_student",
         "embeddings": {t: DISTILL_STUDENT_EMBEDDINGS.format(run="untrained", split=f"eval_{t}") for t in tasks}},
    ]
    for run, loss in distill_runs().items():
        rows.append({"name": f"student_{run}", "kind": "student",
                     "loss": "+".join(x for x in (loss["structural"], loss["contextual"]) if x),
                     "summary": f"models/distill/{run}/training_summary.json",
                     "embeddings": {t: DISTILL_STUDENT_EMBEDDINGS.format(run=run, split=f"eval_{t}")
                                    for t in tasks}})
    return rows
