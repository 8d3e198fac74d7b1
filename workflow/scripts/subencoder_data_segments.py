"""Rule subencoder_data_segments: sentences -> propositions -> char spans (§3.3 step 1, App. A.1-A.3)."""
import dataclasses
import os

from multivec.io import write_jsonl, write_meta
from multivec.subencoder.segmentation import segment_and_align, segmenter_from_config
from multivec.subencoder.sentence_pairs import read_pairs
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0]) as log:
    seg = snakemake.params.segmenter
    pairs = read_pairs(snakemake.input.pairs)
    sentences = {}
    for p in pairs:
        sentences.setdefault(p.a_id, p.a)
        sentences.setdefault(p.b_id, p.b)
    seed_rows = {}
    if snakemake.input.get("seed"):  # paper scale: the LLM's seed share, then the distilled model
        from multivec.io import read_jsonl

        seed_rows = {r["id"]: r for r in read_jsonl(snakemake.input.seed)}
    model_dir = snakemake.input.get("segmenter_model") or None
    segmenter = segmenter_from_config(seg["kind"], seg, snakemake.params.llm, model_dir)
    rest = {k: v for k, v in sentences.items() if k not in seed_rows}
    rows, counts = segment_and_align(rest, segmenter)
    rows = list(seed_rows.values()) + rows
    for row in rows:
        row["segmenter"] = row.get("segmenter", segmenter.name)
        row["stand_in"] = row.get("stand_in", segmenter.stand_in)
    write_jsonl(snakemake.output.segments, rows)
    stats = dataclasses.asdict(counts)
    stats["from_seed"] = len(seed_rows)
    client = getattr(segmenter, "client", None)
    write_meta(os.path.dirname(snakemake.output.segments), "subencoder_data_segments",
               {"pairs": snakemake.input.pairs, **({"seed": snakemake.input.seed} if seed_rows else {})}, stats, [],
               segmenter=segmenter.name, stand_in=segmenter.stand_in,
               llm_client=client.stats.as_dict() if client is not None else None)
    log.info("%s: %d sentences, %d propositions (%d malformed/empty generations dropped, %d unaligned claims)",
             segmenter.name, counts.sentences, counts.propositions, counts.malformed_or_empty,
             counts.propositions_unaligned)
