"""Rule subencoder_data_pairs: unlabelled sentence pairs (Chen et al. 2023 §3.3)."""
import os

from multivec.io import check_minimum, write_jsonl, write_meta
from multivec.subencoder.data.propsegment import read_clusters
from multivec.subencoder.data.sentence_pairs import cluster_pairs, read_pair_file
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    settings = snakemake.params.settings
    source = settings["pairs_source"]
    warnings: list = []
    if source == "propsegment_test":
        clusters = read_clusters(snakemake.input.pairs_input)
        pairs = cluster_pairs(clusters, per_sentence=int(settings["per_sentence"]), min_shared=int(settings["min_shared"]))
        counts = {"clusters": len(clusters), "documents": sum(len(c.documents) for c in clusters),
                  "sentences": sum(len(d) for c in clusters for d in c.documents.values()), "pairs": len(pairs)}
    else:
        pairs = read_pair_file(snakemake.input.pairs_input)
        counts = {"pairs": len(pairs)}
    check_minimum("sentence pairs", len(pairs), settings.get("min_pairs"), snakemake.input.pairs_input, warnings)
    write_jsonl(snakemake.output.pairs, (p.to_row() for p in pairs))
    write_meta(os.path.dirname(snakemake.output.pairs), "subencoder_data_pairs",
               {"pairs_input": snakemake.input.pairs_input}, counts, warnings, pairs_source=source,
               per_sentence=settings.get("per_sentence"), min_shared=settings.get("min_shared"))
    log.info("%d sentence pairs from %s", len(pairs), source)
