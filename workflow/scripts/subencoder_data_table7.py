"""Rule subencoder_data_table7: segmenters vs PropSegment human segmentations (Table 7, App. A.4)."""
import pandas as pd
from pathlib import Path

from multivec.subencoder.propsegment import attach_segmentations, read_clusters
from multivec.subencoder.segmentation import segmenter_from_config
from multivec.subencoder.segmentation_quality import TABLE7_COLUMNS, table7_markdown, table7_rows
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0]) as log:
    seg = snakemake.params.segmenter
    splits = {}
    for split in snakemake.params.splits:
        clusters = read_clusters(snakemake.input[f"clusters_{split}"])
        attach_segmentations(clusters, snakemake.input[f"propositions_{split}"])
        sentences = [s for c in clusters for d in c.documents.values() for s in d if s.propositions]
        if snakemake.params.max_sentences:
            sentences = sentences[:int(snakemake.params.max_sentences)]
        splits[split] = sentences
    segmenters = {kind: segmenter_from_config(kind, seg, snakemake.params.llm,
                                              snakemake.input.get("segmenter_model") or None)
                  for kind in seg["table7"]}
    rows = table7_rows(splits, segmenters)
    table = pd.DataFrame(rows, columns=TABLE7_COLUMNS)
    table[["sentences", "predicted", "gold"]] = table[["sentences", "predicted", "gold"]].astype("Int64")
    table.to_csv(snakemake.output.csv, index=False)
    Path(snakemake.output.md).write_text(table7_markdown(rows, snakemake.params.scale_line), encoding="utf-8")
    log.info("Table 7: %d rows", len(rows))
