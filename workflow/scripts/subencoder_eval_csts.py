# Table 3 (Chen et al. 2023 §4.2.2): C-STS with LLM-picked condition words and each SubEncoder.
import os

from multivec.subencoder.evaluation.csts import csts_predictions, read_csts, spearman_x100
from multivec.subencoder.model import SubEncoder
from multivec.subencoder.tables.paper_tables import table3, write_table
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    from multivec.subencoder.data.llm_client import client_from_config  # the cached chat client (App. A.1)

    rows = read_csts(snakemake.input.csts)
    labels = [r["label"] for r in rows]
    results = []
    for backbone, weights in zip(snakemake.params.backbones, snakemake.input.models):
        model = SubEncoder.load(os.path.dirname(weights))
        for llm in snakemake.params.llm_models:
            complete = client_from_config({**snakemake.params.llm, "model": llm}).complete
            predictions, counts = csts_predictions(model, rows, complete, int(snakemake.params.batch_size))
            results.append({"llm": llm, "backbone": backbone, "spearman_x100": spearman_x100(predictions, labels),
                            "counts": counts})
            log.info("%s %s: Spearman x100 %.2f %s", llm, backbone["name"], results[-1]["spearman_x100"], counts)
    write_table(table3(results), snakemake.output.csv, snakemake.output.md, "Table 3: C-STS, Spearman r x 100",
                [f"{len(rows)} C-STS pairs."])
