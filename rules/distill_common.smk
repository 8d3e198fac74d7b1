# Bindings of the distillation student's rules (rules/distill.smk) to this run's config; the logic is
# multivec.rules.distill_students (documents data/built/distill/{train,eval_<task>}.jsonl and the chosen
# teachers' embeddings folders are its interface with rules/distill_teachers.smk).
from multivec.rules.distill_students import (DISTILL_DOCUMENTS, DISTILL_RUN_PATTERN, DISTILL_STUDENT_EMBEDDINGS,
                                                DISTILL_STUDENT_MODEL, DISTILL_UNTRAINED_EMBEDDINGS, DistillStudents,
                                                committed_entries, committed_entry_files, distill_entry_folders,
                                                frozen_check_entries)

DISTILL_STUDENTS = DistillStudents(config, DISTILL_TEACHERS, SEED_SETS)
DISTILL_GEOMETRY = DISTILL_STUDENTS.geometry
distill_tasks = DISTILL_STUDENTS.distill_tasks
distill_geometry_tasks = DISTILL_STUDENTS.distill_geometry_tasks
distill_runs = DISTILL_STUDENTS.distill_runs
distill_student_config = DISTILL_STUDENTS.distill_student_config
distill_note = DISTILL_STUDENTS.distill_note
distill_train_config = DISTILL_STUDENTS.distill_train_config
distill_teacher = DISTILL_STUDENTS.distill_teacher
distill_table_entries = DISTILL_STUDENTS.distill_table_entries
distill_curve_runs = DISTILL_STUDENTS.distill_curve_runs
distill_gold_folders = DISTILL_STUDENTS.distill_gold_folders

for _table in DISTILL_STUDENTS.stat_tables():
    register_stat_table(**_table)
