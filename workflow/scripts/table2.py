from multivec.nugget.tables.plots import plot_table2
from multivec.nugget.tables.table2 import METRICS, assemble_table2, truncation_lines, with_gates, write_table2
from multivec.nugget.gates import checked_models, gate_notes
from multivec.nugget.tables.table2_rows import table2_record
from multivec.evaluation.ranking_evaluation import read_row_metrics
from multivec.nugget.tables.uncertainty import statistics_lines
from multivec.statistics import statistics_note, table_statistics_from_units
from multivec.io import read_json
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p = snakemake.params
    metrics = read_row_metrics(snakemake.input.evaluations)
    records = []
    gates = checked_models(p.model_dirs)  # sanity gates: failures are logged and named in the table
    for row in p.rows:
        training = read_json(f"{p.model_dirs[row['name']]}/training_summary.json") if row["name"] in p.model_dirs else None
        records.append(with_gates(table2_record(row, metrics[row["name"]], training), gates.get(row["name"])))
    stats = table_statistics_from_units(snakemake.input.units, p.comparisons, p.statistics)
    df = stats.add_columns(assemble_table2(records), "row", METRICS, require=True)
    stats.write_tests(snakemake.output.tests)
    scale_line = (f"Scale: **{p.scale}**. NUGGET/TSDAE encoder: `{p.nugget_encoder}`; reference rows (ColBART, "
                  f"mean-pooled) use the untrained `{p.base_encoder}`. PI: {p.pi_source} set; RR: built from "
                  f"{p.rr_source}.")
    notes = truncation_lines(metrics) + gate_notes(gates, [read_json(f) for f in snakemake.input.base_gates]) + statistics_lines(stats, snakemake.input.claims,
                                                         {"table2": snakemake.input.units}, p.claims)
    write_table2(df, snakemake.output.csv, snakemake.output.md, scale_line, notes,
                 statistics_note(p.statistics["confidence"], p.seeds, "queries"))
    plot_table2(df, snakemake.output.figure, f"NUGGET Table 2 — {p.scale} scale")
    log.info("\n%s", df.to_string(index=False))
