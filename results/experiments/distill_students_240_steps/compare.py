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

from multivec.distill.evaluation import evaluate_units, task_files
from multivec.io import write_csv
from multivec.statistics.resampling import holm, paired_difference
from multivec.statistics.units import Measurement, stack_seeds

TASKS = ("lee", "polarity", "pi", "rr")
RUNS = ("ls_cosine", "ls_cosine+lc_soft_cca")


def stack(name, metric, scores):
    return stack_seeds([Measurement(name, metric, scores.statistic, scores.units, scores.values, None)])[(name, metric)]


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
                    d = paired_difference(stack("variant", metric, scores), stack(name, metric, reference[metric]))
                    rows.append({"student": f"{run} ({label})", "against": name, "metric": metric,
                                 "value": round(scores.value(), 4), "against_value": round(reference[metric].value(), 4),
                                 "difference": round(d.difference, 4), "lo": round(d.lo, 4), "hi": round(d.hi, 4),
                                 "p": round(d.p, 4)})
    for row, adjusted in zip(rows, holm([r["p"] for r in rows])):
        row["p_holm"] = round(float(adjusted), 4)
    write_csv(out, rows)
    for row in rows:
        print(row)


if __name__ == "__main__":
    main(*sys.argv[1:])
