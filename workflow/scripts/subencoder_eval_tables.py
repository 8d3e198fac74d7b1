# Tables 1, 4, 5 and 8 of Chen et al. 2023 from the retrieval JSONs (multivec.subencoder.tables): the
# metrics are seed means with 95% bootstrap CIs over queries (the unit files), then the declared paired
# comparisons (results/subencoder_<table>_tests.csv) and the verdicts of each table's claims.
from multivec.io import read_json
from multivec.statistics.claims import table_verdict_lines
from multivec.subencoder.table_units import TABLE_METRICS, RowSource, evaluation_path, stat_table_name, subencoder_row
from multivec.subencoder.tables import add_statistics, index_size_line, retrieval_table_frame, write_table
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p, out, claims = snakemake.params, snakemake.output, snakemake.params.claims
    first = p.backbones[0]["name"]
    full = read_json(evaluation_path(RowSource(subencoder_row(first), "trained", first, "full"), p.seed))
    index = index_size_line(full["index"]["vectors_per_sentence"], full["dim"], p.reduced_dim)
    seeds = (f"SubEncoder rows: mean over {len(p.seeds)} training seed(s) ({', '.join(map(str, p.seeds))}); "
             "cells are mean [95% bootstrap CI over queries, pooled across seeds] ± seed-to-seed SD (with two "
             "or more seeds); untrained rows are deterministic (one evaluation).")
    demo_note = ("Scale: " + p.scale + ". Demo and smoke SubEncoders train on the data builders' demo pairs "
                 "(stand-in segmenter and NLI proxy: see data/built/subencoder/meta.json), briefly, on CPU.")
    retrieval_set = (f"Queries: {full['queries']} PropSegment dev hypothesis propositions over {full['candidates']} "
                     "candidate propositions (45 Wikipedia documents), not the paper's 8.8k/45k retrieval set.")
    notes = {"table1": [], "table4": ["A unit's score is the max over its propositions; the query's own document "
                                      "is left out."],
             "table5": ["delta_*: the reduced model's seed mean minus the full model's."],
             "table8": [f"Queries: the gold queries whose sentence's predicted proposition (segmenter "
                        f"{p.segmenter!r}) matches them at Jaccard > {p.match_jaccard}; gold = the same queries' "
                        "human propositions."]}
    titles = {"table1": "Table 1: atomic-fact retrieval (PropSegment dev)",
              "table4": "Table 4: sentence- and document-level retrieval",
              "table5": "Table 5: reduced output dimension",
              "table8": "Table 8: retrieval with segmenter-predicted query propositions"}
    for table in p.tables:
        units = snakemake.input[f"units_{table}"]
        metrics = list(TABLE_METRICS[table])
        frame, stats = add_statistics(retrieval_table_frame(table, p.backbones, p.baselines, p.reduced_dim,
                                                            p.paper_table5_row, p.seed),
                                      units, metrics, p.statistics, p.comparisons[table])
        stats.write_tests(out[f"{table}_tests"])
        verdicts = table_verdict_lines(snakemake.input.claims, {stat_table_name(table): units}, claims)
        write_table(frame, out[f"{table}_csv"], out[f"{table}_md"], titles[table],
                    [index, retrieval_set, demo_note, seeds, *notes[table]], metrics,
                    [*stats.markdown_tests(), "", *verdicts])
        log.info("%s: %d rows, %d comparisons", table, len(frame), len(stats.tests))
