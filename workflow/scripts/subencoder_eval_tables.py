# Tables 1, 4, 5 and 8 of Chen et al. 2023 from the retrieval JSONs (multivec.subencoder.tables).
import os

from multivec.io import read_json
from multivec.subencoder.tables import index_size_line, table1, table4, table5, table8, write_table
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0]) as log:
    p, out = snakemake.params, snakemake.output
    def by_name(paths):
        return {os.path.basename(path)[:-len(".json")]: read_json(path) for path in paths}

    results, predicted_results = by_name([*snakemake.input.base, *snakemake.input.trained]), \
        by_name(snakemake.input.predicted)
    rows = []
    for backbone in p.backbones:
        name = backbone["name"]
        for strategy in p.baselines:
            rows.append({"row": f"{name} (untrained, {strategy})", "kind": "base", "strategy": strategy,
                         "paper_row": backbone.get("paper_base_row"),
                         "paper_table4_row": None, "result": results[f"base_{name}_{strategy}"]})
        rows.append({"row": f"SubEncoder ({name})", "kind": "subencoder", "strategy": "mask_pooling",
                     "paper_row": backbone.get("paper_row"), "paper_table4_row": backbone.get("paper_table4_row"),
                     "result": results[f"subencoder_{name}_full"]})
    first = p.backbones[0]["name"]
    full = results[f"subencoder_{first}_full"]
    reduced = results.get(f"subencoder_{first}_d{p.reduced_dim}") if p.reduced_dim else None
    index = index_size_line(full["index"]["vectors_per_sentence"], full["dim"], reduced["dim"] if reduced else None)
    demo_note = ("Scale: " + p.scale + ". Demo and smoke SubEncoders train on the data builders' demo pairs "
                 "(stand-in segmenter and NLI proxy: see data/built/subencoder/meta.json), briefly, on CPU.")
    retrieval_set = (f"Queries: {full['queries']} PropSegment dev hypothesis propositions over {full['candidates']} "
                     "candidate propositions (45 Wikipedia documents), not the paper's 8.8k/45k retrieval set.")
    notes = [index, retrieval_set, demo_note]
    write_table(table1(rows), out.table1_csv, out.table1_md, "Table 1: atomic-fact retrieval (PropSegment dev)", notes)
    t4_rows = [{**r, "paper_row": r["paper_table4_row"]} for r in rows if r["strategy"] == "mask_pooling"]
    write_table(table4(t4_rows), out.table4_csv, out.table4_md, "Table 4: sentence- and document-level retrieval",
                notes + ["A unit's score is the max over its propositions; the query's own document is left out."])
    if p.reduced_dim:
        t5_rows = [{"row": f"SubEncoder ({first})", "result": full, "paper_row": p.paper_table5_row,
                    "paper_dim": full["dim"] if p.paper_table5_row else None},
                   {"row": f"SubEncoder ({first}, {p.reduced_dim}-d)", "result": reduced,
                    "paper_row": p.paper_table5_row, "paper_dim": p.reduced_dim if p.paper_table5_row else None}]
        write_table(table5(t5_rows), out.table5_csv, out.table5_md, "Table 5: reduced output dimension", notes)
    if p.segmenter:
        t8_rows = []
        for backbone in p.backbones:
            predicted = predicted_results[f"subencoder_{backbone['name']}_full"]
            t8_rows.append({"row": f"SubEncoder ({backbone['name']})", "segmenter": predicted["segmenter"],
                            "paper_row": backbone.get("paper_table8_row"), "gold": predicted["gold"],
                            "predicted": predicted["predicted"], "all_queries": predicted["all_queries"]})
        seg_note = (f"Queries: the gold queries whose sentence's predicted proposition (segmenter "
                    f"{p.segmenter!r}) matches them at Jaccard > 0.8; gold = the same queries' human propositions.")
        write_table(table8(t8_rows), out.table8_csv, out.table8_md,
                    "Table 8: retrieval with segmenter-predicted query propositions", notes + [seg_note])
    log.info("wrote %s", ", ".join(out))
