from multivec.evaluation.plots import plot_table2
from multivec.evaluation.table2 import assemble_table2, truncation_lines, write_table2
from multivec.evaluation.table2_rows import table2_record
from multivec.evaluation.ranking_evaluation import read_row_metrics
from multivec.io import read_json
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p = snakemake.params
    metrics = read_row_metrics(snakemake.input.evaluations)
    records = []
    for row in p.rows:
        training = read_json(f"{p.model_dirs[row['name']]}/training_summary.json") if row["name"] in p.model_dirs else None
        records.append(table2_record(row, metrics[row["name"]], training))
    df = assemble_table2(records)
    scale_line = (f"Scale: **{p.scale}**. NUGGET/TSDAE encoder: `{p.nugget_encoder}`; reference rows (ColBART, "
                  f"mean-pooled) use the untrained `{p.base_encoder}`. PI: {p.pi_source} set; RR: built from "
                  f"{p.rr_source}.")
    write_table2(df, snakemake.output.csv, snakemake.output.md, scale_line, truncation_lines(metrics))
    plot_table2(df, snakemake.output.figure, f"NUGGET Table 2 — {p.scale} scale")
    log.info("\n%s", df.to_string(index=False))
