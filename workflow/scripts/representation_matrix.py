# The representation matrix: every representation against every task (results/representations.{csv,md,png}).
import pandas as pd

from multivec.evaluation.representation_matrix import matrix_cells, matrix_markdown, plot_matrix, read_sizes
from multivec.pipeline.script_support import rule_logging
from multivec.rules.representations import matrix_representations

with rule_logging(snakemake.log[0]) as log:
    p = snakemake.params
    gates = pd.read_csv(snakemake.input.table2_csv).set_index("row")["gate"].fillna("").to_dict()
    representations = matrix_representations(p.table2_rows, p.document_task_rows, p.base_encoder,
                                             p.subencoder_backbones, p.subencoder_lexical, p.distill_rows, gates,
                                             p.subencoder_baselines)
    sizes = read_sizes(snakemake.input.sizes)
    units = {table: snakemake.input[table] for table in
             ("table2", "table2_document_tasks", "subencoder_table1", "distill_table", "distill_propsegment")}
    records = matrix_cells(representations, units, sizes, p.statistics["confidence"],
                           p.statistics["bootstrap_resamples"])
    pd.DataFrame(records).to_csv(snakemake.output.csv, index=False)
    scale = f"Scale: **{p.scale}**. Sources: Table 2 and its rows on the document tasks, the sub-sentence encoder's Table 1 (authors' protocol), the distillation table and its rows on PropSegment."
    notes = ["Multi-vector rows on Lee: symmetric MaxSim-mean; on polarity: a logistic regression on the mean of a "
             "document's vectors (multivec.evaluation.document_tasks).",
             "PropSegment: the mean-pooled base encoder is Table 1's untrained backbone on the proposition's own "
             "tokens (token_subset); the distillation rows embed each proposition's text (its tokens as the "
             "sentence joins them); every row keeps one vector per proposition.",
             "gate: Table 2's sanity gate of a trained NUGGET/TSDAE row (best dev loss below the unigram entropy); the "
             "distillation table checks its students otherwise (its frozen-backbone row must embed as the untrained "
             "student does), and the SubEncoder's Table 1 compares it with its untrained backbone."]
    with open(snakemake.output.md, "w") as f:
        f.write(matrix_markdown(records, scale, notes))
    plot_matrix(records, snakemake.output.figure, f"Quality against index size per document ({p.scale} scale)")
    log.info("%d cells of %d representations", len(records), len(representations))
