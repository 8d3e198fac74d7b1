# Path helpers and config look-ups of the distillation student's rules (rules/distill.smk).
#
# Interface with rules/distill_teachers.smk (the teachers' side of issue 9), in one place here:
# documents data/built/distill/{train,eval_<task>}.jsonl; teacher embeddings folders below.
DISTILL_DOCUMENTS = "data/built/distill/{split}.jsonl"
# A trained student and its embeddings carry their training seed (statistics.seeds); the untrained student
# and the teachers are deterministic (config seed) and have none.
DISTILL_STUDENT_MODEL = "models/distill/{run}/seed{seed}"
DISTILL_STUDENT_EMBEDDINGS = "data/distill/student/{run}/seed{seed}/{split}"
DISTILL_UNTRAINED_EMBEDDINGS = "data/distill/student/untrained/{split}"
DISTILL_RUN_PATTERN = "l[sc]_[a-z_]+(\\+lc_[a-z_]+)?"
FROZEN_SUFFIX = "_frozen"  # the sanity run: both losses, backbone frozen (its row must equal the untrained one)


def distill_tasks():
    """The demo evaluation tasks (the teachers' side owns distill.evaluation)."""
    return list(config["distill"]["evaluation"]["tasks"])


DISTILL_GEOMETRY = config["distill"]["evaluation"].get("geometry") or {"tasks": []}


def distill_geometry_tasks():
    """The evaluation tasks of results/distill_geometry (distill.evaluation.geometry.tasks that are built)."""
    return [t for t in DISTILL_GEOMETRY["tasks"] if t in distill_tasks()]


def distill_task_files(task):
    """What evaluate_embeddings needs beside the embeddings: the task's documents file."""
    return {"documents": DISTILL_DOCUMENTS.format(split=f"eval_{task}")}


def distill_runs():
    """{run name: loss settings}: L_S only, then L_C only and both for each contextual loss, and (runs.frozen)
    both with the first contextual loss and the backbone frozen (run name ending in FROZEN_SUFFIX)."""
    loss, runs = config["distill"]["loss"], config["distill"]["runs"]
    out = {f"ls_{loss['structural']}": {**loss, "contextual": None}}
    for variant in runs["contextual_losses"]:
        out[f"lc_{variant}"] = {**loss, "structural": None, "contextual": variant}
        out[f"ls_{loss['structural']}+lc_{variant}"] = {**loss, "contextual": variant}
    if runs.get("frozen", False):
        variant = runs["contextual_losses"][0]
        out[f"ls_{loss['structural']}+lc_{variant}{FROZEN_SUFFIX}"] = {**loss, "contextual": variant}
    return out


def distill_student_config(seed=None, run=""):
    """The student's settings; ``seed`` (a trained student's) initialises its heads, else the config seed; a
    run named ...FROZEN_SUFFIX trains its heads only."""
    student = {k: v for k, v in config["distill"]["student"].items() if k != "embed_batch_size"}
    return {**student, "seed": config["seed"] if seed is None else int(seed),
            "freeze_backbone": str(run).endswith(FROZEN_SUFFIX)}


def distill_loss_label(run, loss):
    """The table's loss column: the losses of the run, and whether its backbone was frozen."""
    label = "+".join(x for x in (loss["structural"], loss["contextual"]) if x)
    return f"{label} (backbone frozen)" if run.endswith(FROZEN_SUFFIX) else label


def distill_note():
    """The table's first line: scale, student, schedule, seeds and the loss combination."""
    train, student, loss = config["distill"]["train"], config["distill"]["student"], config["distill"]["loss"]
    chunks = f" in chunks of {student['chunk_tokens']}" if student.get("chunk_tokens") else ""
    return (f"Scale {config['scale']}; student {student['backbone']} reading up to {student['max_tokens']} tokens"
            f"{chunks} "
            f"({train['max_steps']} steps of batch {train['batch_size']} x {train.get('grad_accumulation', 1)}, "
            f"lr {train['lr']} backbone / {train.get('lr_scratch') or train['lr']} heads, "
            f"seeds {', '.join(map(str, model_seeds('tables')))}); combination {loss['combination']} "
            f"(lambda {loss['lam']}); the structural teacher reads {loss['mask_max_tokens']} tokens.")


def distill_train_config(seed):
    """The training settings of a student trained with ``seed`` (batch order, dropout)."""
    return {**config["distill"]["train"], "seed": int(seed)}


def distill_teacher(side, split):
    """The chosen teacher's embeddings (distill.structural_teacher.teacher / contextual_teacher.teacher)."""
    return structural_teacher_dir(split) if side == "structural" else contextual_teacher_dir(split)


def distill_metrics():
    """The metric names of the distillation tables' unit files (multivec.distill.evaluation.demo_tasks.METRICS)."""
    from multivec.distill.evaluation.demo_tasks import METRICS

    return [metric for task in distill_tasks() for metric in METRICS[task]]


def distill_table_entries(seedset="tables"):
    """One entry per (row, seed) of results/distill_table: rows named by role (the same at every scale, as
    config/claims.yaml names them); the trained students at every seed of model_seeds(seedset). For `claims`,
    only the rows a claim names (seedset_rows): the frozen sanity row trains at the table seeds only."""
    tasks = distill_tasks()
    entries = [
        {"name": "structural_teacher", "kind": "structural_teacher", "seed": None,
         "model": f"sbert_{DISTILL['structural_teacher']['teacher']}",
         "embeddings": {t: distill_teacher("structural", f"eval_{t}") for t in tasks}},
        {"name": "contextual_teacher", "kind": "contextual_teacher", "seed": None,
         "model": f"pv_{DISTILL['contextual_teacher']['teacher']}",
         "embeddings": {t: distill_teacher("contextual", f"eval_{t}") for t in tasks}},
        {"name": "teachers_concatenated", "kind": "teachers_concatenated", "seed": None, "model": "",
         "embeddings": {t: f"data/distill/concat/eval_{t}" for t in tasks}},
        {"name": "student_untrained", "kind": "untrained_student", "seed": None,
         "model": config["distill"]["student"]["backbone"],
         "embeddings": {t: DISTILL_UNTRAINED_EMBEDDINGS.format(split=f"eval_{t}") for t in tasks}},
    ]
    for run, loss in distill_runs().items():
        for seed in model_seeds(seedset):
            entries.append({"name": f"student_{run}", "kind": "student", "seed": seed,
                            "frozen": run.endswith(FROZEN_SUFFIX),
                            "model": config["distill"]["student"]["backbone"],
                            "loss": distill_loss_label(run, loss),
                            "summary": f"{DISTILL_STUDENT_MODEL.format(run=run, seed=seed)}/training_summary.json",
                            "embeddings": {t: DISTILL_STUDENT_EMBEDDINGS.format(run=run, seed=seed, split=f"eval_{t}")
                                           for t in tasks}})
    kept = set(seedset_rows("distill_table", seedset, [e["name"] for e in entries]))
    return [e for e in entries if e["name"] in kept]


def distill_curve_runs():
    """{row, seed, metrics} per trained student of results/distill_table (its metrics.csv, beside the summary)."""
    return [{"row": e["name"], "seed": e["seed"],
             "metrics": e["summary"].replace("training_summary.json", "metrics.csv")}
            for e in distill_table_entries("tables") if "summary" in e]


def distill_entry_folders(entries):
    return sorted({folder for entry in entries for folder in entry["embeddings"].values()})


def distill_gold_folders():
    return [f"data/built/distill/eval_{t}" for t in distill_tasks()]


register_stat_table("distill_table", "distill", rows=list(dict.fromkeys(e["name"] for e in distill_table_entries())),
                    metrics=distill_metrics())
register_stat_table("distill_teachers", "distill", rows=[name for name, _, _ in distill_teachers()],
                    metrics=distill_metrics())
