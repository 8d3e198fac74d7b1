"""Rule subencoder_data_training: positive proposition pairs and the train/dev rows (§3.3 step 2)."""
import dataclasses
import os

from multivec.io import check_minimum, read_jsonl, write_jsonl, write_meta
from multivec.subencoder.nli import judge_from_config
from multivec.subencoder.sentence_pairs import read_pairs
from multivec.subencoder.training_data import SegmentedSentence, build_rows, split_dev
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0]) as log:
    settings = snakemake.params.settings
    pairs = read_pairs(snakemake.input.pairs)
    segment_rows = read_jsonl(snakemake.input.segments)
    segments = {r["id"]: SegmentedSentence(r["id"], r["sentence"], r["propositions"]) for r in segment_rows}
    judge = judge_from_config(snakemake.params.nli)
    rows, counts = build_rows(pairs, segments, judge)
    warnings: list = []
    check_minimum("training sentence pairs", counts.pairs_kept, settings.get("min_kept_pairs"),
                  [snakemake.input.pairs, snakemake.input.segments], warnings)
    train, dev = split_dev(rows, float(settings["dev_fraction"]), int(snakemake.params.seed))
    write_jsonl(snakemake.output.train, train)
    write_jsonl(snakemake.output.dev, dev)
    stand_ins = [name for name, flag in ((judge.name, judge.stand_in),
                                         (segment_rows[0].get("segmenter", "?") if segment_rows else "?",
                                          bool(segment_rows and segment_rows[0].get("stand_in")))) if flag]
    write_meta(os.path.dirname(snakemake.output.train), "subencoder_data_training",
               {"pairs": snakemake.input.pairs, "segments": snakemake.input.segments},
               {**{k: v for k, v in dataclasses.asdict(counts).items() if k != "extra"},
                "train_rows": len(train), "dev_rows": len(dev)}, warnings,
               judge=judge.name, segmenter=segment_rows[0].get("segmenter") if segment_rows else None,
               stand_ins=stand_ins, dev_fraction=settings["dev_fraction"])
    log.info("%d of %d pairs kept (%d positive of %d proposition pairs): %d train, %d dev rows",
             counts.pairs_kept, counts.pairs_in, counts.positive_proposition_pairs,
             counts.candidate_proposition_pairs, len(train), len(dev))
