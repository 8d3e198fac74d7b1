"""Each L_C-only student of this experiment against the untrained student, paired over the same units
(Lee documents, RR queries): metric, difference, 95% paired bootstrap CI and randomization p (unadjusted).

    python results/experiments/distill_soft_cca_heads/compare.py OUT.csv UNTRAINED_ROOT NAME=STUDENT_ROOT ...

UNTRAINED_ROOT: a clone holding data/built/distill and data/distill/student/untrained; STUDENT_ROOT: a
student's embeddings root (data/distill/student/lc_soft_cca/seed13 of the clone that trained it).
"""

import csv
import sys

from multivec.distill.evaluation.demo_tasks import evaluate_units, task_files
from multivec.statistics.resampling import paired_difference
from multivec.statistics.units import Measurement, stack_seeds


def stack(name, metric, scores, seed):
    return stack_seeds([Measurement(name, metric, scores.statistic, scores.units, scores.values, seed)])[(name, metric)]


def main(out, base, *rows):
    variants = dict(arg.split("=", 1) for arg in rows)
    with open(out, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["variant", "metric", "value", "untrained", "difference", "lo", "hi", "p"])
        for task in ("lee", "rr"):
            files = task_files(task, root=f"{base}/data/built/distill")
            untrained = evaluate_units(task, f"{base}/data/distill/student/untrained/eval_{task}", files)
            for name, root in variants.items():
                for metric, scores in evaluate_units(task, f"{root}/eval_{task}", files).items():
                    d = paired_difference(stack(name, metric, scores, 13), stack("untrained", metric,
                                                                                  untrained[metric], None))
                    writer.writerow([name, metric, f"{scores.value():.4f}", f"{untrained[metric].value():.4f}",
                                     f"{d.difference:+.4f}", f"{d.lo:+.4f}", f"{d.hi:+.4f}", f"{d.p:.4f}"])


if __name__ == "__main__":
    main(*sys.argv[1:])
