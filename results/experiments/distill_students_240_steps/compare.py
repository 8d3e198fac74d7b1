"""Each student of a variant run against the untrained student, the same student of the committed tables and
the structural teacher (all-mpnet-base-v2), paired over the same units of the four demo tasks: the
difference, its 95% paired bootstrap CI and the randomization p, Holm-corrected over every row written.

    PYTHONPATH=src python results/experiments/distill_students_240_steps/compare.py OUT.csv BASE OTHER LABEL [RUN ...]

BASE: the clone that built the committed tables (data/built/distill, data/distill/student/untrained,
data/distill/student/<run>/seed13, data/distill/teachers/sbert_mpnet); OTHER: the clone that trained the
variant (data/distill/student/<run>/seed13); LABEL names the variant in the CSV ("240 steps"); RUN: the
students compared (default: ls_cosine and ls_cosine+lc_soft_cca). Used by this experiment and by
../distill_fixed_structural_head.
"""

import sys

from multivec.distill.evaluation.demo_tasks import evaluate_units, paired_comparison, task_files
from multivec.io import write_csv
from multivec.statistics.resampling import with_holm

TASKS = ("lee", "polarity", "pi", "rr")
RUNS = ("ls_cosine", "ls_cosine+lc_soft_cca")


def main(out, base, other, label, *runs):
    rows = []
    for task in TASKS:
        files = task_files(task, root=f"{base}/data/built/distill")
        untrained = evaluate_units(task, f"{base}/data/distill/student/untrained/eval_{task}", files)
        mpnet = evaluate_units(task, f"{base}/data/distill/teachers/sbert_mpnet/eval_{task}", files)
        for run in runs or RUNS:
            short = evaluate_units(task, f"{base}/data/distill/student/{run}/seed13/eval_{task}", files)
            for metric, scores in evaluate_units(task, f"{other}/data/distill/student/{run}/seed13/eval_{task}",
                                                 files).items():
                for name, reference in (("untrained", untrained), ("committed", short), ("structural_teacher", mpnet)):
                    rows.append({"student": f"{run} ({label})", "against": name, "metric": metric,
                                 **paired_comparison(scores, reference[metric])})
    write_csv(out, with_holm(rows))
    print(f"{len(rows)} comparisons written to {out}")


if __name__ == "__main__":
    main(*sys.argv[1:])
