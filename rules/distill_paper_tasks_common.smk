# Bindings of the paper-scale distillation tasks (rules/distill_paper_tasks.smk) to this run's config: IMDB's
# document sets, the table's rows, DISTILL_PAPER_TARGETS for rule all and the IMDB audit registration. The
# logic is multivec.rules.distill_paper_tasks.
from multivec.rules.distill_paper_tasks import DISTILL_IMDB_RESULT, IMDB_DOCUMENTS, IMDB_SPLITS, DistillPaperTasks

DISTILL_PAPER_TASKS = DistillPaperTasks(config, DISTILL_TEACHERS, DISTILL_STUDENTS, SEED_SETS)
DISTILL_PAPER = DISTILL_PAPER_TASKS.settings
DISTILL_PAPER_TARGETS = DISTILL_PAPER_TASKS.targets
distill_imdb_rows = DISTILL_PAPER_TASKS.distill_imdb_rows
distill_imdb_folders = DISTILL_PAPER_TASKS.distill_imdb_folders
distill_imdb_results = DISTILL_PAPER_TASKS.distill_imdb_results
distill_imdb_unit_entries = DISTILL_PAPER_TASKS.distill_imdb_unit_entries
distill_imdb_head_config = DISTILL_PAPER_TASKS.distill_imdb_head_config

register_stat_table(**DISTILL_PAPER_TASKS.stat_table())
for _audited, _entries in zip((AUDIT_CORPORA, AUDIT_TASKS), DISTILL_PAPER_TASKS.audit_entries()):
    _audited.update(_entries)
