# Per-query P@1 and R@5 of every distillation-table row on PropSegment (the representation matrix).
import os

from multivec.distill.embeddings import read_embeddings
from multivec.interop.propsegment_beir import propsegment_units
from multivec.pipeline.script_support import rule_logging
from multivec.statistics import Measurement, write_units
from multivec.subencoder.evaluation.retrieval_set import build_retrieval_set

with rule_logging(snakemake.log[0]) as log:
    rs = build_retrieval_set(os.path.dirname(snakemake.input.relationships))
    measurements = []
    for row, seed, folder in snakemake.params.entries:
        ids, vectors, _ = read_embeddings(folder)
        scores = propsegment_units(rs, dict(zip(ids, vectors)))
        measurements += [Measurement(row, metric, s.statistic, s.units, s.values, None if seed is None else int(seed))
                         for metric, s in scores.items()]
        log.info("%s%s: P@1 %.2f", row, "" if seed is None else f" seed {seed}", scores["P@1"].value())
    n = write_units(snakemake.output[0], measurements)
    log.info("%s: %d unit scores", snakemake.output[0], n)
