"""What the `exports` target exports and what it skips, with the reason (rules/interop.smk)."""
import csv
import os

from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    rows = snakemake.params.rows
    os.makedirs(os.path.dirname(snakemake.output[0]) or ".", exist_ok=True)
    with open(snakemake.output[0], "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["name", "kind", "source", "status", "export", "reason"],
                                delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    skipped = [row for row in rows if row["status"] == "skipped"]
    log.info("%s: %d models exported, %d skipped", snakemake.output[0], len(rows) - len(skipped), len(skipped))
    for row in skipped:
        log.info("skipped %s (%s): %s", row["name"], row["kind"], row["reason"])
