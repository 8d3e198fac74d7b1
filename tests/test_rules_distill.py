"""The distillation work's paths and look-ups: teachers, students and paper tasks
(multivec.rules.distill_teachers, distill_students, distill_paper_tasks)."""

import copy

import pytest

from multivec.rules.distill_paper_tasks import IMDB_DOCUMENTS, DistillPaperTasks
from multivec.rules.distill_students import (FROZEN_SUFFIX, DistillStudents, distill_entry_folders,
                                                distill_loss_label)
from multivec.rules.distill_teachers import (DistillTeachers, distill_documents, distill_eval_inputs,
                                                distill_teacher_dir)
from rules_configs import scale_config, seed_sets


def works(config):
    seeds = seed_sets(config)
    teachers = DistillTeachers(config)
    students = DistillStudents(config, teachers, seeds)
    return teachers, students, DistillPaperTasks(config, teachers, students, seeds)


@pytest.fixture(scope="module")
def demo():
    return scale_config("demo")


def test_teachers(demo):
    teachers, _, _ = works(demo)
    distill = demo["distill"]
    assert distill_documents("eval_lee") == "data/built/distill/eval_lee.jsonl"
    assert distill_teacher_dir("pv", "dm100", "train") == "data/distill/teachers/pv_dm100/train"
    assert teachers.splits == ["train", *(f"eval_{t}" for t in distill["evaluation"]["tasks"])]
    assert teachers.structural_teacher_dir("train") == \
        f"data/distill/teachers/sbert_{distill['structural_teacher']['teacher']}/train"
    assert teachers.contextual_teacher_dir("eval_lee") == \
        f"data/distill/teachers/pv_{distill['contextual_teacher']['teacher']}/eval_lee"
    rows = teachers.distill_teachers()
    assert [kind for _, kind, _ in rows] == ["structural"] * len(teachers.sbert_models) + \
        ["contextual"] * len(teachers.pv_variants)
    assert all(set(folders) == set(teachers.splits) for _, _, folders in rows)
    corpora, tasks = teachers.audit_entries()
    assert list(corpora) == ["distill_train"]
    assert set(tasks) == {f"distill_{t}" for t in teachers.tasks if t not in ("pi", "rr")}


def test_evaluation_inputs():
    assert set(distill_eval_inputs("lee")) == {"documents", "similarities"}
    assert distill_eval_inputs("polarity") == {"documents": "data/raw/gensim/pang_lee_polarity.cor"}
    assert distill_eval_inputs("pi") == {"docs": "data/built/tasks/pi/docs.txt",
                                         "task": "data/built/tasks/pi/task.jsonl"}


def test_runs_and_labels(demo):
    _, students, _ = works(demo)
    structural = demo["distill"]["loss"]["structural"]
    runs = students.distill_runs()
    assert next(iter(runs)) == f"ls_{structural}" and runs[f"ls_{structural}"]["contextual"] is None
    frozen = [r for r in runs if r.endswith(FROZEN_SUFFIX)]
    assert len(frozen) == (1 if demo["distill"]["runs"].get("frozen") else 0)
    assert distill_loss_label("ls_cosine+lc_cca_frozen", {"structural": "cosine", "contextual": "cca"}) == \
        "cosine+cca (backbone frozen)"
    assert distill_loss_label("lc_cca", {"structural": None, "contextual": "cca"}) == "cca"
    config = copy.deepcopy(demo)
    config["distill"]["runs"]["frozen"] = False
    assert not [r for r in works(config)[1].distill_runs() if r.endswith(FROZEN_SUFFIX)]


def test_student_settings(demo):
    _, students, _ = works(demo)
    assert students.distill_student_config()["seed"] == demo["seed"]
    student = students.distill_student_config("14", "ls_cosine+lc_x" + FROZEN_SUFFIX)
    assert student["seed"] == 14 and student["freeze_backbone"] and "embed_batch_size" not in student
    assert not students.distill_student_config(14, "ls_cosine")["freeze_backbone"]
    assert students.distill_train_config("15") == {**demo["distill"]["train"], "seed": 15}
    assert students.distill_note().startswith(f"Scale {demo['scale']}; student ")
    assert students.distill_note().endswith(f"the structural teacher reads {demo['distill']['loss']['mask_max_tokens']} "
                                            "tokens.")
    # No length mask (mask_max_tokens null, the authors' mm_mse_final overlay): said so, never "reads None tokens".
    unmasked = copy.deepcopy(demo)
    unmasked["distill"]["loss"]["mask_max_tokens"] = None
    note = works(unmasked)[1].distill_note()
    assert "None" not in note and note.endswith("L_S on every document (no length mask).")
    assert students.distill_task_files("lee") == {"documents": "data/built/distill/eval_lee.jsonl"}
    assert set(students.distill_geometry_tasks()) <= set(students.distill_tasks())


def test_table_entries(demo):
    _, students, _ = works(demo)
    entries = students.distill_table_entries()
    assert [e["name"] for e in entries[:4]] == ["structural_teacher", "contextual_teacher", "teachers_concatenated",
                                                "student_untrained"]
    trained = [e for e in entries if e["kind"] == "student"]
    assert len(trained) == len(students.distill_runs()) * len(students.seeds.model_seeds("tables"))
    assert all(e["summary"].startswith("models/distill/") for e in trained)
    claimed = students.seeds.claimed_rows("distill_table")
    assert {e["name"] for e in students.distill_table_entries("claims")} == claimed & {e["name"] for e in entries}
    curves = students.distill_curve_runs()
    assert len(curves) == len(trained) and all(c["metrics"].endswith("/metrics.csv") for c in curves)
    folders = distill_entry_folders(entries)
    assert folders == sorted(set(folders)) and students.distill_teacher("structural", "eval_lee") in folders
    assert students.distill_gold_folders() == [f"data/built/distill/eval_{t}" for t in students.distill_tasks()]
    tables = students.stat_tables()
    assert [t["table"] for t in tables] == ["distill_table", "distill_teachers"]
    assert tables[0]["rows"] == list(dict.fromkeys(e["name"] for e in entries))


def test_paper_tasks_are_off_at_demo_and_on_at_paper(demo):
    _, _, off = works(demo)
    assert not off.enabled and off.targets == [] and off.audit_entries() == ({}, {})
    assert off.stat_table()["built"] is False
    _, students, paper = works(scale_config("paper"))
    assert paper.enabled and paper.targets == ["results/distill_imdb.csv", "results/distill_imdb.md"]
    assert paper.audit_entries()[1] == {"distill_imdb": {"format": "text_jsonl", "files": [IMDB_DOCUMENTS["test"]]}}
    rows = paper.distill_imdb_rows()
    assert rows["student_untrained"]["seeds"] == {"fixed": {"train": "data/distill/student/untrained/eval_imdb_train",
                                                            "test": "data/distill/student/untrained/eval_imdb_test"}}
    run = next(iter(students.distill_runs()))
    seeds = students.seeds.model_seeds("tables")
    assert list(rows[f"student_{run}"]["seeds"]) == [f"seed{s}" for s in seeds]
    assert paper.distill_imdb_folders(f"student_{run}", f"seed{seeds[0]}")["test"] == \
        f"data/distill/student/{run}/seed{seeds[0]}/eval_imdb_test"
    results = paper.distill_imdb_results("tables", ".json")
    assert "results/distill_imdb/student_untrained/fixed.json" in results
    entries = paper.distill_imdb_unit_entries("tables")
    assert {e["seed"] for e in entries} == {None, *seeds}
    assert paper.distill_imdb_head_config("fixed")["seed"] == scale_config("paper")["seed"]
    assert paper.distill_imdb_head_config("seed14")["seed"] == 14
