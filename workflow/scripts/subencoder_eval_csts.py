# Table 3 (Chen et al. 2023 §4.2.2): C-STS with LLM-picked condition words and each SubEncoder.
import os

import pandas as pd

from multivec.subencoder.csts import csts_predictions, read_csts, spearman_x100
from multivec.subencoder.model import SubEncoder
from multivec.subencoder.tables import PAPER_TABLE3, markdown
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    from multivec.subencoder.llm_client import client_from_config  # the cached chat client (App. A.1)

    rows = read_csts(snakemake.input.csts)
    labels = [r["label"] for r in rows]
    records = []
    for backbone, weights in zip(snakemake.params.backbones, snakemake.input.models):
        model = SubEncoder.load(os.path.dirname(weights))
        for llm in snakemake.params.llm_models:
            predictions, counts = csts_predictions(model, rows, client_from_config({**snakemake.params.llm, "model": llm}).complete,
                                                   int(snakemake.params.batch_size))
            family = next((k for k in ("SimCSE", "GTR", "ST5") if k.lower() in backbone["encoder"].lower()
                           or k.lower() in backbone["name"].lower()), None)
            records.append({"llm": llm, "subencoder": backbone["name"], "spearman_x100": round(
                spearman_x100(predictions, labels), 2), "paper_spearman_x100": PAPER_TABLE3.get((llm, family)),
                **counts})
            log.info("%s", records[-1])
    df = pd.DataFrame.from_records(records)
    df.to_csv(snakemake.output.csv, index=False)
    with open(snakemake.output.md, "w", encoding="utf-8") as handle:
        handle.write(markdown(df, "Table 3: C-STS, Spearman r x 100", [f"{len(rows)} C-STS pairs."]))
