# Bindings of the distillation teachers' rules (rules/distill_teachers.smk) to this run's config; the logic is
# multivec.rules.distill_teachers. The student's rules (rules/distill.smk) read the chosen teachers'
# embeddings through structural_teacher_dir(split) and contextual_teacher_dir(split).
from multivec.rules.distill_teachers import (DISTILL_GENSIM, MPNET_MODEL, PV_MODEL, DistillTeachers,
                                                distill_documents, distill_teacher_dir)
from multivec.rules.distill_teachers import distill_eval_inputs as _distill_eval_inputs
from multivec.rules.paths import PROPSEGMENT_SPLIT

DISTILL_TEACHERS = DistillTeachers(config)
DISTILL = DISTILL_TEACHERS.distill
DISTILL_TASKS = DISTILL_TEACHERS.tasks
DISTILL_SPLITS = DISTILL_TEACHERS.splits
SBERT_MODELS = DISTILL_TEACHERS.sbert_models
PV_VARIANTS = DISTILL_TEACHERS.pv_variants
structural_teacher_dir = DISTILL_TEACHERS.structural_teacher_dir
contextual_teacher_dir = DISTILL_TEACHERS.contextual_teacher_dir
distill_eval_inputs = lambda wildcards: _distill_eval_inputs(wildcards.task)
distill_teachers = DISTILL_TEACHERS.distill_teachers
committed_teachers = DISTILL_TEACHERS.committed_teachers  # the teachers' table reads their meta.json copies
committed_teacher_metas = DISTILL_TEACHERS.committed_teacher_metas
teacher_unit_entries = DISTILL_TEACHERS.teacher_unit_entries

for _audited, _entries in zip((AUDIT_CORPORA, AUDIT_TASKS), DISTILL_TEACHERS.audit_entries()):
    _audited.update(_entries)
