"""Fig. 4's BLEU of each kept run with its 95% bootstrap CI over the 64 decoded documents, and each run paired
with the demo model (lr 1e-4, 60 steps) over the same documents: difference, paired bootstrap CI and
randomization p, Holm-corrected over the comparisons written. The statistics are the DAG's
(``multivec.nugget.analysis.reconstruction_bleu.bleu_measurement``: per-document sacrebleu statistics against the
round trip, lowercased; ``multivec.statistics``: 2000 resamples, 5000 permutations, seed 0).

    PYTHONPATH=src python results/experiments/nugget_ae_r0.25_learning_rate/bleu_cis.py OUT.csv DEMO.jsonl \
        RUN=SEED:RUN.jsonl[,SEED:RUN.jsonl...] ...

DEMO.jsonl: the demo model's decodes at seed 13 (``results/nugget_analysis/bleu/ae_r0.25/seed13.jsonl``); each
RUN.jsonl: the same file written by the DAG with a run's overlay at a training seed (``hypotheses_<run>*.jsonl``
here). A run of several seeds gets the seed-averaged BLEU, its CI over documents resampled jointly across seeds
and the seed-to-seed SD (the DAG's tables do the same), and each seed's own BLEU and CI in rows of its own.
"""

import sys

from multivec.io import write_csv
from multivec.nugget.analysis.reconstruction_bleu import BLEU_METRIC, bleu_measurement
from multivec.statistics import bootstrap_ci, paired_difference, stack_seeds
from multivec.statistics.resampling import point_estimate, with_holm

DEMO = "lr1e-4_60_steps"


def stack(run, seeds_and_paths):
    measurements = [bleu_measurement(path, run, int(seed), "ae") for seed, path in seeds_and_paths]
    return stack_seeds(measurements)[(run, BLEU_METRIC)]


def runs_to_score(demo_path, runs):
    """(name, [(seed, path)], compared with the demo?) of every run, then one row per seed of each run of
    several seeds (not compared: its run is)."""
    out = [(DEMO, [(13, demo_path)], False)]
    for run in runs:
        name, files = run.split("=", 1)
        seeds_and_paths = [tuple(item.split(":", 1)) for item in files.split(",")]
        out.append((name, seeds_and_paths, True))
        if len(seeds_and_paths) > 1:
            out += [(f"{name}_seed{seed}", [(seed, path)], False) for seed, path in seeds_and_paths]
    return out


def main(out, demo_path, *runs):
    demo = stack(DEMO, [(13, demo_path)])
    rows = []
    for name, seeds_and_paths, compared in runs_to_score(demo_path, runs):
        this = demo if name == DEMO else stack(name, seeds_and_paths)
        lo, hi = bootstrap_ci(this)
        mean, sd = point_estimate(this)
        row = {"run": name, "seeds": " ".join(str(s) for s in this.seeds), "documents": len(this.units),
               "bleu": round(mean, 4), "bleu_lo": round(lo, 4), "bleu_hi": round(hi, 4),
               "bleu_seed_sd": round(sd, 4) if this.n_seeds > 1 else "", "against": "", "difference": "",
               "difference_lo": "", "difference_hi": "", "p": ""}
        if compared:
            diff = paired_difference(this, demo)
            row.update(against=DEMO, difference=round(diff.difference, 4), difference_lo=round(diff.lo, 4),
                       difference_hi=round(diff.hi, 4), p=diff.p)
        rows.append(row)
    holm = iter(with_holm([r for r in rows if r["against"]]))
    rows = [next(holm) if r["against"] else {**r, "p_holm": ""} for r in rows]
    write_csv(out, rows)
    for row in rows:
        print(row)


if __name__ == "__main__":
    main(*sys.argv[1:])
