"""Rule subencoder_table7_scores: every segmenter vs PropSegment's human segmentations, per sentence
(Table 7, App. A.4); the table and its CIs are rule subencoder_data_table7."""
import os

from multivec.io import write_json
from multivec.subencoder.data.propsegment import attach_segmentations, read_clusters
from multivec.subencoder.data.segmentation import segmenter_from_config
from multivec.subencoder.evaluation.segmentation_quality import table7_scores, table7_warnings
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    seg = snakemake.params.segmenter
    splits = {}
    for split in snakemake.params.splits:
        clusters = read_clusters(snakemake.input[f"clusters_{split}"])
        attached = attach_segmentations(clusters, snakemake.input[f"propositions_{split}"])
        log.info("%s: %d sentences with a human segmentation (%d records of news clusters skipped, %d with no "
                 "usable response)", split, attached.attached, attached.other_clusters, attached.no_usable_response)
        sentences = [s for c in clusters for d in c.documents.values() for s in d if s.propositions]
        if snakemake.params.max_sentences:
            sentences = sentences[:int(snakemake.params.max_sentences)]
        splits[split] = sentences
    segmenters = {kind: segmenter_from_config(kind, seg, snakemake.params.llm,
                                              os.path.dirname(snakemake.input.segmenter_model)
                                              if snakemake.input.get("segmenter_model") else None)
                  for kind in seg["table7"]}
    scores = table7_scores(splits, segmenters, snakemake.params.alignment)
    for line in table7_warnings(scores):
        log.warning(line)
    write_json(snakemake.output[0], scores)
    log.info("Table 7 scores: %s", ", ".join(f"{s['kind']} on {s['split']}: {len(s['sentences'])} sentences"
                                             for s in scores))
