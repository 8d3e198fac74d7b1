from multivec.nugget.tables.table4 import METRICS, assemble_table4, table4_record, token_pooling_record, write_table4
from multivec.evaluation.ranking_evaluation import read_row_metrics
from multivec.nugget.tables.uncertainty import statistics_lines
from multivec.statistics import statistics_note, table_statistics_from_units
from multivec.io import read_json
from multivec.nugget.gates import checked_models, gate_notes
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p = snakemake.params
    metrics = read_row_metrics(snakemake.input.evaluations)
    records = []
    gates = checked_models(p.model_dirs)  # sanity gates: failures are logged and named in the table
    for name in p.rows:
        folder = p.model_dirs[name]
        saved = read_json(f"{folder}/config.json")
        if "model" not in saved:
            raise ValueError(f"{folder}/config.json has no 'model' key (a NuggetModel config)")
        records.append(table4_record(name, saved["model"], metrics[name], read_json(f"{folder}/training_summary.json"),
                                     gates[name]))
    if p.pooling:  # Table 2's token-pooling run at r = 0.1, under Table 4's row name
        pooled = read_row_metrics(snakemake.input.pooling)
        records.append(token_pooling_record(p.pooling["ratio"], pooled[p.pooling["run"]]))
    stats = table_statistics_from_units(snakemake.input.units, p.comparisons, p.statistics)
    df = stats.add_columns(assemble_table4(records), "name", METRICS, require=True)
    stats.write_tests(snakemake.output.tests)
    share = read_json(snakemake.input.share)
    header = [f"Scale: **{p.scale}**. Encoder: `{p.nugget_encoder}`. The paper's l -> ours: "
              + ", ".join(f"{k} -> {v}" for k, v in sorted(p.layers.items())) + " (`nugget_ablation.layers`).",
              "", statistics_note(p.statistics["confidence"], p.seeds, "queries")]
    notes = gate_notes(gates) + statistics_lines(stats, snakemake.input.claims,
                                                 {"nugget_table4": snakemake.input.units}, p.claims)
    write_table4(df, snakemake.output.csv, snakemake.output.md, header, share, notes)
    log.info("\n%s", df.to_string(index=False))
