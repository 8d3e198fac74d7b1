"""The L_C-only student trained against the PV teacher of ``run.py --write-teacher`` (demo+pi_train), paired
over the same units with the untrained student and with the L_C student of the committed tables (the
517-document PV): per task metric, the difference, its 95% paired bootstrap CI and the randomization p,
Holm-corrected over the rows written.

    PYTHONPATH=src python results/experiments/distill_pv_more_text/compare.py OUT.csv BASE_ROOT NEW_ROOT OLD_ROOT

BASE_ROOT: a clone holding data/built/distill and data/distill/student/untrained; NEW_ROOT / OLD_ROOT: the
two L_C students' embedding roots (data/distill/student/lc_soft_cca/seed13 of the clones that trained them).
"""

import sys

from multivec.distill.evaluation.demo_tasks import evaluate_units, paired_comparison, task_files
from multivec.io import write_csv
from multivec.statistics.resampling import with_holm

TASKS = ("lee", "polarity", "pi", "rr")


def main(out, base, new, old):
    rows = []
    for task in TASKS:
        files = task_files(task, root=f"{base}/data/built/distill")
        against = {"untrained": evaluate_units(task, f"{base}/data/distill/student/untrained/eval_{task}", files),
                   "lc_517_document_pv": evaluate_units(task, f"{old}/eval_{task}", files)}
        for metric, scores in evaluate_units(task, f"{new}/eval_{task}", files).items():
            for name, reference in against.items():
                rows.append({"student": "lc_more_text_pv", "against": name, "metric": metric,
                             **paired_comparison(scores, reference[metric])})
    write_csv(out, with_holm(rows))
    print(f"{len(rows)} comparisons written to {out}")


if __name__ == "__main__":
    main(*sys.argv[1:])
