"""What the rule files (rules/*.smk) name, as importable and testable code: paths, targets, params and
registrations of every work, each function taking the config (or a class built from it) so that the rule files
hold only thin bindings and read as recipes.

Shared by every work:

- ``paths``: raw, extracted and built data paths, the raw files of each corpus source, the overlap audit's registry;
- ``seed_sets``: the seed sets (`tables`, `claims`) and the rows each holds (the claims file decides).

One work each:

- ``nugget_zoo``, ``nugget_table2``, ``nugget_figures``, ``nugget_ablation``, ``nugget_lm``: NUGGET's zoo of
  models, Table 2's runs, the figures' files, Table 4's ablations and Table 3's language models;
- ``subencoder``: the sub-sentence encoder's data, models, tables and registrations;
- ``distill_teachers``, ``distill_students``, ``distill_paper_tasks``: the distillation work's teachers,
  students and paper-scale IMDB task.

Above the three works in the package's layers (tests/test_package_layout.py): it reads every work's names.
Nothing here imports a heavy library at import time (the workflow imports it at every start,
tests/test_workflow.py). Config errors are the config layer's (multivec.config), checked before any job.
"""
