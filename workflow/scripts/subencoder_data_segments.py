"""Rule subencoder_data_segments: sentences -> propositions -> char spans (§3.3 step 1, App. A.1-A.3)."""
import dataclasses
import os

from multivec.io import write_jsonl, write_meta
from multivec.subencoder.data.segmentation import segment_and_align, segmenter_from_config
from multivec.subencoder.data.sentence_pairs import read_pairs
from multivec.subencoder.data.training_rows import read_segments
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    seg, alignment = snakemake.params.segmenter, snakemake.params.alignment
    pairs = read_pairs(snakemake.input.pairs)
    sentences = {}
    for p in pairs:
        sentences.setdefault(p.a_id, p.a)
        sentences.setdefault(p.b_id, p.b)
    seed_rows = {}
    if snakemake.input.get("seed"):  # paper scale: the LLM's seed share, then the distilled model
        from multivec.io import read_jsonl

        read_segments(snakemake.input.seed, sentences, snakemake.input.pairs)  # every id is a sentence of the pairs
        seed_rows = {r["id"]: r for r in read_jsonl(snakemake.input.seed)}
    weights = snakemake.input.get("segmenter_model")  # the distilled segmenter's model.safetensors
    model_dir = os.path.dirname(weights) if weights else None
    oracle_files = ({"clusters": snakemake.input.human_clusters, "propositions": snakemake.input.human_segmentations,
                     "evaluation_clusters": snakemake.input.evaluation_clusters}
                    if seg["kind"] == "oracle" else None)
    segmenter = segmenter_from_config(seg["kind"], seg, snakemake.params.llm, model_dir, oracle_files)
    rest = {k: v for k, v in sentences.items() if k not in seed_rows}
    rows, counts = segment_and_align(rest, segmenter, alignment)
    rows = list(seed_rows.values()) + rows
    for row in rows:
        row["segmenter"] = row.get("segmenter", segmenter.name)
        row["stand_in"] = row.get("stand_in", segmenter.stand_in)
    write_jsonl(snakemake.output.segments, rows)
    stats = dataclasses.asdict(counts)
    stats["from_seed"] = len(seed_rows)
    stats["propositions_per_segmented_sentence"] = round(counts.propositions / max(counts.segmented, 1), 3)
    client = getattr(segmenter, "client", None)
    inputs = {"pairs": snakemake.input.pairs, **({"seed": snakemake.input.seed} if seed_rows else {}),
              **(oracle_files or {})}
    write_meta(os.path.dirname(snakemake.output.segments), "subencoder_data_segments", inputs, stats, [],
               segmenter=segmenter.name, stand_in=segmenter.stand_in,
               alignment=None if seg["kind"] == "oracle" else alignment,
               llm_client=client.stats.as_dict() if client is not None else None)
    log.info("%s: %d sentences, %d propositions (%d malformed/empty generations or sentences without a human "
             "segmentation dropped, %d unaligned claims)", segmenter.name, counts.sentences, counts.propositions,
             counts.malformed_or_empty, counts.propositions_unaligned)
