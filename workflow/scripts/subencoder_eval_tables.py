# Tables 1, 4, 5 and 8 of Chen et al. 2023 from the retrieval JSONs (multivec.subencoder.tables.paper_tables): the
# metrics are seed means with 95% bootstrap CIs over queries (the unit files), then the declared paired
# comparisons (results/subencoder_<table>_tests.csv) and the verdicts of each table's claims. The notes
# come from the evaluations and the configuration (multivec.subencoder.tables.paper_tables.retrieval_notes).
from multivec.io import read_json
from multivec.statistics.claims import table_verdict_lines
from multivec.subencoder.tables.units import TABLE_METRICS, RowSource, evaluation_path, stat_table_name, subencoder_row
from multivec.subencoder.tables.paper_tables import add_statistics, pca_fit, retrieval_notes, retrieval_table_frame, write_table
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p, out, claims = snakemake.params, snakemake.output, snakemake.params.claims
    first = p.subencoder["model"]["backbones"][0]["name"]
    full = read_json(evaluation_path(RowSource(subencoder_row(first), "trained", first, "full"), p.seed))
    titles = {"table1": "Table 1: atomic-fact retrieval (PropSegment dev)",
              "table4": "Table 4: sentence- and document-level retrieval",
              "table5": "Table 5: reduced output dimension",
              "table8": "Table 8: retrieval with segmenter-predicted query propositions"}
    for table in p.tables:
        units = snakemake.input[f"units_{table}"]
        metrics = list(TABLE_METRICS[table])
        frame, stats = add_statistics(retrieval_table_frame(table, p.subencoder, p.seed),
                                      units, metrics, p.statistics, p.comparisons[table])
        stats.write_tests(out[f"{table}_tests"])
        verdicts = table_verdict_lines(snakemake.input.claims, {stat_table_name(table): units}, claims)
        pca = pca_fit(p.subencoder, p.seed) if table == "table5" else None
        write_table(frame, out[f"{table}_csv"], out[f"{table}_md"], titles[table],
                    retrieval_notes(table, full, p.subencoder, p.scale, p.seeds, pca), metrics,
                    [*stats.markdown_tests(), "", *verdicts])
        log.info("%s: %d rows, %d comparisons", table, len(frame), len(stats.tests))
