"""The distillation work's results tables (Burian 2023):

- ``teacher_table``: the teacher selection grid (§3.2), ``results/distill_teachers``;
- ``main_table``: teachers and students on the demo tasks (§5, the hypothesis of §3), ``results/distill_table``;
- ``imdb_table``: IMDB accuracy with the thesis's head (§5.1.1), ``results/distill_imdb``;
- ``statistics``: the per-unit scores, CIs, comparisons and claim verdicts the three share.
"""
