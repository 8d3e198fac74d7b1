"""Rule subencoder_data_llm_seed: the App. A.1 prompt on a seeded share of the sentences (§3.3 step 1)."""
import dataclasses
import os
import random

from multivec.io import write_jsonl, write_meta
from multivec.subencoder.data.segmentation import segment_and_align, segmenter_from_config
from multivec.subencoder.data.sentence_pairs import read_pairs
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    seg = snakemake.params.segmenter
    pairs = read_pairs(snakemake.input.pairs)
    share = float(seg["llm_fraction"])
    chosen = random.Random(int(snakemake.params.seed)).sample(range(len(pairs)), max(1, round(share * len(pairs))))
    sentences = {}
    for i in sorted(chosen):
        sentences.setdefault(pairs[i].a_id, pairs[i].a)
        sentences.setdefault(pairs[i].b_id, pairs[i].b)
    segmenter = segmenter_from_config("llm", seg, snakemake.params.llm)
    rows, counts = segment_and_align(sentences, segmenter, snakemake.params.alignment)
    for row in rows:
        row["segmenter"], row["stand_in"] = segmenter.name, False
    write_jsonl(snakemake.output.segments, rows)
    write_meta(os.path.dirname(snakemake.output.segments), "subencoder_data_llm_seed", {"pairs": snakemake.input.pairs},
               {**dataclasses.asdict(counts), "pairs_sampled": len(chosen)}, [], segmenter=segmenter.name,
               llm_fraction=share, llm_client=segmenter.client.stats.as_dict())
    log.info("LLM seed: %d sentences, %d malformed/empty dropped; client %s", counts.sentences,
             counts.malformed_or_empty, segmenter.client.stats.as_dict())
