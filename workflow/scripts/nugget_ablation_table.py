from multivec.evaluation.table4 import assemble_table4, table4_record, write_table4
from multivec.evaluation.ranking_evaluation import read_row_metrics
from multivec.io import read_json
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p = snakemake.params
    metrics = read_row_metrics(snakemake.input.evaluations)
    records = []
    for name in p.rows:
        folder = p.model_dirs[name]
        saved = read_json(f"{folder}/config.json")
        if "model" not in saved:
            raise ValueError(f"{folder}/config.json has no 'model' key (a NuggetModel config)")
        records.append(table4_record(name, saved["model"], metrics[name], read_json(f"{folder}/training_summary.json")))
    df = assemble_table4(records)
    share = read_json(snakemake.input.share)
    header = [f"Scale: **{p.scale}**. Encoder: `{p.nugget_encoder}`. The paper's l -> ours: "
              + ", ".join(f"{k} -> {v}" for k, v in sorted(p.layers.items())) + " (`nugget_ablation.layers`)."]
    write_table4(df, snakemake.output.csv, snakemake.output.md, header, share)
    log.info("\n%s", df.to_string(index=False))
