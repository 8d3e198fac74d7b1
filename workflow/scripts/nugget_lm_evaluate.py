"""Word-level perplexity (footnote 6) of one NUGGET LM row at each h, and the history vectors of every
evaluated segment (what the next segments cross-attend to)."""
import os
import time

import torch
from safetensors.torch import save_file

from multivec.io import write_json
from multivec.nugget.language_model import SegmentData, encode_segments, evaluate, load
from multivec.nugget.lm_data import read_streams
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    lm = load(os.path.dirname(snakemake.input.model))
    data = SegmentData(lm.nugget, lm.settings, read_streams(snakemake.input.test), snakemake.params.max_segments)
    perplexity = {}
    for h in snakemake.params.histories:
        start = time.perf_counter()
        perplexity[str(h)] = evaluate(lm, data, h, snakemake.params.batch_size)
        perplexity[str(h)]["seconds"] = round(time.perf_counter() - start, 2)
        log.info("h=%d: %s", h, perplexity[str(h)])
    write_json(snakemake.output.perplexity, {"row": snakemake.wildcards.row, "history": lm.settings.history,
                                             "segments": len(data.segments), "perplexity": perplexity})
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
