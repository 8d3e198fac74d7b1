"""Does a Paragraph Vector teacher trained on more text embed better? (the distillation target's untested lever)

Trains the demo's contextual teacher (PV-DM 100, 30 epochs, ``distill.contextual_teacher.teacher``) on
  * ``demo``: the 517 distillation training documents, as the DAG does (must reproduce
    ``results/distill_teachers.csv``'s dm100_e30 row);
  * ``demo+pi_train``: those plus the 2,047 documents of the released PI **train** split (ParaBank; the
    evaluation uses PI dev), after dropping any document that shares a word 8-gram with an evaluation
    document (the DAG's own filter, ``drop_evaluation_overlap``);
and scores each on the four demo tasks with the DAG's evaluation code, with 95% bootstrap CIs over each
task's units and a paired randomization test of ``demo+pi_train`` against ``demo`` (Holm over the five metrics).

    PYTHONPATH=src MULTIVEC_DATA_MIRROR=... python results/experiments/distill_pv_more_text/run.py \
        --built <clone>/data/built/distill --out results/experiments/distill_pv_more_text
"""
from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from multivec.distill.teachers.paragraph_vector import ensure_hash_seed

ensure_hash_seed(0)

from multivec.distill.data.documents import drop_evaluation_overlap, read_documents  # noqa: E402
from multivec.distill.embeddings import write_embeddings  # noqa: E402
from multivec.distill.evaluation.demo_tasks import evaluate_units  # noqa: E402
from multivec.distill.teachers.paragraph_vector import PVVariant, train_and_infer  # noqa: E402
from multivec.io import write_csv, write_jsonl  # noqa: E402
from multivec.io.resources import data_mirror  # noqa: E402
from multivec.statistics.resampling import bootstrap_ci, paired_difference, with_holm  # noqa: E402
from multivec.statistics.units import Measurement, stack_seeds  # noqa: E402
from multivec.tasks.ranking_task import RankingTask  # noqa: E402

TASKS = ["lee", "polarity", "pi", "rr"]


def stack(name, metric, scores):
    return stack_seeds([Measurement(name, metric, scores.statistic, scores.units, scores.values, None)])[(name, metric)]
VARIANT = {"name": "dm100_e30", "epochs": 30,
           "parts": [{"architecture": "dm", "vector_size": 100, "min_count": 2, "preprocessing": "lowercase"}]}


def teacher_corpus(built: Path) -> tuple[list[dict], dict[str, list[dict]], list[dict], list[str]]:
    """(the demo's training documents, the evaluation documents by task, the PI-train documents kept by the
    DAG's 8-gram filter, the ids it dropped)."""
    train = read_documents(built / "train.jsonl")
    evaluation = {t: read_documents(built / f"eval_{t}.jsonl") for t in TASKS}
    pi_train = RankingTask.load(data_mirror(None) / "nugget-data/paraphrase_identification/train")
    extra = [{"id": f"pi_train/{i}", "text": pi_train.documents[i]} for i in sorted(pi_train.documents)
             if pi_train.documents[i].strip()]
    kept, dropped = drop_evaluation_overlap(extra, evaluation)
    print(f"PI train: {len(extra)} documents, {len(dropped)} dropped for sharing an 8-gram with evaluation")
    return train, evaluation, kept, dropped


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--built", required=True, help="a clone's data/built/distill")
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--write-teacher", help="write demo+pi_train's vectors of the 517 training documents "
                        "(its own, trained) and of the evaluation sets (inferred) here, in the DAG's teacher layout")
    parser.add_argument("--write-corpus", help="only write demo+pi_train's documents here (the DAG's layout of "
                        "data/built/distill/train.jsonl, for the overlap audit) and stop")
    args = parser.parse_args()
    built, out = Path(args.built), Path(args.out)
    train, evaluation, kept, dropped = teacher_corpus(built)
    if args.write_corpus:
        write_jsonl(args.write_corpus, train + kept)
        return
    extra_count = len(kept) + len(dropped)
    corpora = {"demo": train, "demo+pi_train": train + kept}
    units, rows = {}, []
    for name, docs in corpora.items():
        variant = PVVariant.from_config(VARIANT, epochs=30, seed=args.seed)
        texts = [d["text"] for d in docs]
        result = train_and_infer(variant, texts, {t: [d["text"] for d in evaluation[t]] for t in TASKS})
        words = sum(len(t.split()) for t in texts)
        units[name] = {}
        if args.write_teacher and name == "demo+pi_train":
            meta = {"model": "dm100_e30 on demo+pi_train", "teacher": "contextual", "how": "trained",
                    "experiment": "results/experiments/distill_pv_more_text"}
            write_embeddings(Path(args.write_teacher) / "train", [d["id"] for d in train],
                             result.train_vectors[:len(train)], meta)
            for t in TASKS:
                write_embeddings(Path(args.write_teacher) / f"eval_{t}", [d["id"] for d in evaluation[t]],
                                 result.inferred[t], {**meta, "how": "infer_vector"})
        with tempfile.TemporaryDirectory() as tmp:
            for t in TASKS:
                folder = Path(tmp) / t
                write_embeddings(folder, [d["id"] for d in evaluation[t]], result.inferred[t], {"model": name})
                for metric, scores in evaluate_units(t, folder, {"documents": str(built / f"eval_{t}.jsonl")}).items():
                    units[name][metric] = scores
                    lo, hi = bootstrap_ci(stack(name, metric, scores), seed=0)
                    rows.append({"corpus": name, "documents": len(docs), "words": words,
                                 "vocabulary": result.vocabulary[0], "metric": metric,
                                 "value": round(scores.value(), 4), "lo": round(lo, 4), "hi": round(hi, 4),
                                 "train_seconds": round(result.seconds, 1)})
                    print(rows[-1])
    tests = []
    for metric, scores in units["demo+pi_train"].items():
        base = units["demo"][metric]
        d = paired_difference(stack("more", metric, scores), stack("demo", metric, base), seed=0)
        tests.append({"metric": metric, "more_text": round(scores.value(), 4), "demo": round(base.value(), 4),
                      "difference": round(d.difference, 4), "lo": round(d.lo, 4), "hi": round(d.hi, 4),
                      "p": round(d.p, 4)})
    for row in with_holm(tests):
        print(row)
    write_csv(out / "pv_scores.csv", rows)
    write_csv(out / "pv_more_text_vs_demo.csv", tests)
    (out / "corpus.json").write_text(json.dumps({"pi_train_documents": extra_count, "dropped": dropped,
                                                 "demo_documents": len(train)}, indent=1) + "\n")


if __name__ == "__main__":
    main()
