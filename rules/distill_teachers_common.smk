# Config look-ups and paths of the distillation teachers (rules/distill_teachers.smk); the student's
# rules (rules/distill.smk) read the chosen teachers' embeddings through distill_teacher_dir,
# structural_teacher_dir(split) and contextual_teacher_dir(split). Functions live here, apart from the rules (snakemake --lint).
DISTILL = config["distill"]
DISTILL_TASKS = DISTILL["evaluation"]["tasks"]
DISTILL_SPLITS = ["train"] + [f"eval_{t}" for t in DISTILL_TASKS]
SBERT_MODELS = DISTILL["structural_teacher"]["models"]
PV_VARIANTS = {v["name"]: v for v in DISTILL["contextual_teacher"]["variants"]}
MPNET_MODEL = "data/raw/all_mpnet_base_v2/model/modules.json"
PV_MODEL = "models/paragraph_vector/{variant}"  # a saved variant, trained once (rule paragraph_vector_model)
# The chosen teachers among the listed ones, variant names unique: checked with the config (multivec.config).
DISTILL_GENSIM = {
    "lee_background": "data/raw/gensim/lee_background.cor",
    "gensim_enwiki": GENSIM_ENWIKI,
    "debian_reference": raw("debian_reference", "pairs.jsonl"),
    # paper scale: WikiText-103's training articles (the Wikipedia half of the thesis's corpus; docs/distill.md)
    "wikitext103": "data/extracted/wikitext103_raw/wikitext-103-raw/wiki.train.raw",
}


def distill_documents(split):
    return f"data/built/distill/{split}.jsonl"


def distill_teacher_dir(kind, name, split):
    """Embeddings folder of a teacher on a document set: kind 'sbert' (model name) or 'pv' (variant)."""
    return f"data/distill/teachers/{kind}_{name}/{split}"


# The teachers the student learns from (config distill.structural_teacher.teacher / contextual_teacher.teacher).
def structural_teacher_dir(split):
    return distill_teacher_dir("sbert", DISTILL["structural_teacher"]["teacher"], split)


def contextual_teacher_dir(split):
    return distill_teacher_dir("pv", DISTILL["contextual_teacher"]["teacher"], split)


def distill_eval_inputs(wildcards):
    if wildcards.task == "lee":
        return {"documents": "data/raw/gensim/lee.cor", "similarities": "data/raw/gensim/similarities0-1.txt"}
    if wildcards.task == "polarity":
        return {"documents": "data/raw/gensim/pang_lee_polarity.cor"}
    return {"docs": f"{task_dir(wildcards.task)}/docs.txt", "task": f"{task_dir(wildcards.task)}/task.jsonl"}


def distill_teachers():
    """(row name, kind, {split: embeddings folder}) for every teacher in the table."""
    rows = [(f"sbert_{m}", "structural", {s: distill_teacher_dir("sbert", m, s) for s in DISTILL_SPLITS})
            for m in SBERT_MODELS]
    rows += [(f"pv_{v}", "contextual", {s: distill_teacher_dir("pv", v, s) for s in DISTILL_SPLITS})
             for v in PV_VARIANTS]
    return rows


def teacher_unit_entries():
    """The teachers as entries of their unit file (seed None: deterministic given the config seed)."""
    from multivec.distill.tables.teacher_table import teacher_entries

    return teacher_entries(distill_teachers(), DISTILL_TASKS)


# Overlap audit (rules/audit.smk): the student's training documents against each evaluation task's.
AUDIT_CORPORA["distill_train"] = {"format": "text_jsonl", "files": [distill_documents("train")]}
AUDIT_TASKS.update({f"distill_{task}": {"format": "text_jsonl", "files": [distill_documents(f"eval_{task}")]}
                    for task in DISTILL_TASKS if task not in TASKS})  # PI and RR are audited whole
