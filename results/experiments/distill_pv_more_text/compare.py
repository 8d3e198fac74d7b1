"""The L_C-only student trained against the PV teacher of ``run.py --write-teacher`` (demo+pi_train), paired
over the same units with the untrained student and with the L_C student of the committed tables (the
517-document PV): per task metric, the difference, its 95% paired bootstrap CI and the randomization p,
Holm-corrected over the rows written.

    PYTHONPATH=src python results/experiments/distill_pv_more_text/compare.py OUT.csv BASE_ROOT NEW_ROOT OLD_ROOT

BASE_ROOT: a clone holding data/built/distill and data/distill/student/untrained; NEW_ROOT / OLD_ROOT: the
two L_C students' embedding roots (data/distill/student/lc_soft_cca/seed13 of the clones that trained them).
"""

import sys

from multivec.distill.evaluation import evaluate_units, task_files
from multivec.io import write_csv
from multivec.statistics.resampling import holm, paired_difference
from multivec.statistics.units import Measurement, stack_seeds

TASKS = ("lee", "polarity", "pi", "rr")


def stack(name, metric, scores, seed):
    return stack_seeds([Measurement(name, metric, scores.statistic, scores.units, scores.values, seed)])[(name, metric)]


def main(out, base, new, old):
    rows = []
    for task in TASKS:
        files = task_files(task, root=f"{base}/data/built/distill")
        against = {"untrained": evaluate_units(task, f"{base}/data/distill/student/untrained/eval_{task}", files),
                   "lc_517_document_pv": evaluate_units(task, f"{old}/eval_{task}", files)}
        for metric, scores in evaluate_units(task, f"{new}/eval_{task}", files).items():
            for name, reference in against.items():
                d = paired_difference(stack("new", metric, scores, 13),
                                      stack(name, metric, reference[metric], None))
                rows.append({"student": "lc_more_text_pv", "against": name, "metric": metric,
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
