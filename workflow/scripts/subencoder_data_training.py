"""Rule subencoder_data_training: positive proposition pairs and the train/dev rows (§3.3 step 2)."""
import dataclasses
import os

from multivec.io import check_minimum, read_json, write_jsonl, write_meta
from multivec.subencoder.data.nli import judge_from_config
from multivec.subencoder.data.sentence_pairs import read_pairs
from multivec.subencoder.data.training_rows import build_rows, read_segments, split_dev
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    settings = snakemake.params.settings
    pairs = read_pairs(snakemake.input.pairs)
    known = {i for p in pairs for i in (p.a_id, p.b_id)}
    segments = read_segments(snakemake.input.segments, known, snakemake.input.pairs)
    segmented = read_json(snakemake.input.segments_meta)
    judge = judge_from_config(snakemake.params.nli)
    rows, counts = build_rows(pairs, segments, judge, snakemake.params.linking)
    warnings: list = []
    check_minimum("training sentence pairs", counts.pairs_kept, settings.get("min_kept_pairs"),
                  [snakemake.input.pairs, snakemake.input.segments], warnings)
    train, dev = split_dev(rows, float(settings["dev_fraction"]), int(snakemake.params.seed))
    write_jsonl(snakemake.output.train, train)
    write_jsonl(snakemake.output.dev, dev)
    segmenter, segmenter_stand_in = segmented.get("segmenter"), bool(segmented.get("stand_in"))
    stand_ins = [name for name, flag in ((judge.name, judge.stand_in), (segmenter, segmenter_stand_in)) if flag]
    seg_counts = segmented.get("counts", {})
    unaligned = int(seg_counts.get("propositions_unaligned", 0)) + counts.propositions_unaligned
    write_meta(os.path.dirname(snakemake.output.train), "subencoder_data_training",
               {"pairs": snakemake.input.pairs, "segments": snakemake.input.segments},
               {**{k: v for k, v in dataclasses.asdict(counts).items() if k != "extra"},
                "propositions_unaligned": unaligned, "train_rows": len(train), "dev_rows": len(dev),
                "segmented_sentences": seg_counts.get("segmented"), "segmented_propositions": seg_counts.get("propositions"),
                "propositions_per_segmented_sentence": seg_counts.get("propositions_per_segmented_sentence")},
               warnings, judge=judge.name, segmenter=segmenter, alignment=segmented.get("alignment"),
               stand_ins=stand_ins, dev_fraction=settings["dev_fraction"],
               linking=snakemake.params.linking)
    log.info("%d of %d pairs kept (%d positive of %d proposition pairs): %d train, %d dev rows; %d unaligned "
             "propositions dropped", counts.pairs_kept, counts.pairs_in, counts.positive_proposition_pairs,
             counts.candidate_proposition_pairs, len(train), len(dev), unaligned)
