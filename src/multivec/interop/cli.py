"""The command line's ``export-model`` and ``export-run`` (``python -m multivec export-model --help``)."""

from __future__ import annotations

import argparse
import json

from multivec.interop.folders import KINDS

MODEL_EPILOG = ("kinds: student (distilled student), teacher (structural SBERT teacher: a sentence-transformers "
                "folder, or minilm / mpnet), tsdae (NUGGET zoo variant tsdae), nugget (NUGGET zoo model), "
                "subencoder (sub-sentence encoder). Without --kind the kind is read from SRC's files. Folders "
                "with multivec's own modules (nugget, subencoder, chunked students) load with "
                "trust_remote_code=True and multivec installed; see docs/interop.md.")


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = MODEL_EPILOG
    parser.add_argument("src", metavar="SRC", help="a trained model folder (or minilm / mpnet for --kind teacher)")
    parser.add_argument("dest", metavar="DEST", help="the sentence-transformers folder to write (new or empty)")
    parser.add_argument("--kind", choices=KINDS, default=None, help="the kind of SRC (default: detected)")
    parser.add_argument("--metrics", default=None, help="a metrics JSON to show in the model card (README.md)")
    parser.add_argument("--max-seq-length", type=int, default=None,
                        help="teacher only: the max_seq_length the project embeds with (default: the model's)")


def run_model(args: argparse.Namespace) -> int:
    from multivec.interop.export import export_model

    info = export_model(args.src, args.dest, args.kind, metrics=args.metrics, max_seq_length=args.max_seq_length)
    print(json.dumps(info, indent=2))
    return 0


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = ("Writes OUT/run.trec and OUT/qrels.trec; with --task also OUT/beir/ (corpus.jsonl, "
                     "queries.jsonl, qrels/test.tsv, candidates.jsonl). --ties pessimistic (default) makes any TREC "
                     "evaluator give the project's MRR (ties ranked against the answer); plain keeps the scores "
                     "and lets the evaluator order ties by document id.")
    parser.add_argument("rankings", metavar="RANKINGS", help="a rankings JSONL of the ranking evaluation "
                                                             "(results/table2/<run>/<task>.rankings.jsonl)")
    parser.add_argument("out", metavar="OUT", help="the folder to write")
    parser.add_argument("--ties", choices=("pessimistic", "plain"), default="pessimistic",
                        help="how tied scores are written (default: pessimistic, the project's MRR)")
    parser.add_argument("--name", default=None, help="the run name (default: the rankings file's stem)")
    parser.add_argument("--task", default=None, help="a ranking task folder (docs.txt, task.jsonl) to write in "
                                                     "BEIR's layout too")


def run_run(args: argparse.Namespace) -> int:
    from multivec.interop.ranking_formats import run_from_rankings, write_beir

    written = run_from_rankings(args.rankings, args.out, args.name, args.ties)
    if args.task:
        from pathlib import Path

        from multivec.tasks.ranking_task import RankingTask

        written.update(write_beir(RankingTask.load(args.task), Path(args.out) / "beir"))
    for name, path in written.items():
        print(f"{name}: {path}")
    return 0
