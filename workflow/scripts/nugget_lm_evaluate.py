"""Word-level perplexity (footnote 6) of one NUGGET LM row at each h, and the history vectors of every
evaluated segment (what the next segments cross-attend to), and per segment its words' NLL at each h
(Table 3's per-unit scores)."""
import os
import time

import torch
from safetensors.torch import save_file

from multivec.io import write_json, write_jsonl
from multivec.nugget.language_model import SegmentData, encode_segments, evaluate_segments, load
from multivec.nugget.lm_table3 import segment_records
from multivec.nugget.lm_data import read_streams
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    lm = load(os.path.dirname(snakemake.input.model))
    data = SegmentData(lm.nugget, lm.settings, read_streams(snakemake.input.test), snakemake.params.max_segments)
    perplexity, per_segment = {}, {}
    for h in snakemake.params.histories:
        start = time.perf_counter()
        perplexity[str(h)], per_segment[h] = evaluate_segments(lm, data, h, snakemake.params.batch_size)
        perplexity[str(h)]["seconds"] = round(time.perf_counter() - start, 2)
        log.info("h=%d: %s", h, perplexity[str(h)])
    write_json(snakemake.output.perplexity, {"row": snakemake.wildcards.row, "history": lm.settings.history,
                                             "segments": len(data.segments), "perplexity": perplexity})
    write_jsonl(snakemake.output.segments, segment_records(per_segment))
    memories = data.memories
    if memories is None:  # encoder not frozen: the memories were not cached
        with torch.no_grad():
            memories = encode_segments(lm.nugget, lm.settings, [s.text for s in data.segments])
    d = lm.nugget.encoder.hidden_size
    vectors = [m.vectors.float().cpu() for m in memories]
    save_file({"vectors": torch.cat(vectors) if vectors else torch.zeros(0, d),
               "counts": torch.tensor([len(v) for v in vectors], dtype=torch.int64),
               "stream": torch.tensor([s.stream for s in data.segments], dtype=torch.int64),
               "position": torch.tensor([s.position for s in data.segments], dtype=torch.int64)},
              snakemake.output.history)
