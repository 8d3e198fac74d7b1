# IMDB 25k/25k from the official aclImdb_v1.tar.gz -> data/built/distill/eval_imdb_{train,test}.jsonl.
from multivec.distill.data.imdb import check_counts, read_imdb, write_splits
from multivec.io import write_json
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    archive = snakemake.input[0]
    splits = read_imdb(archive)
    counts = check_counts(splits, snakemake.params.per_split, archive)
    write_splits(splits, {"train": snakemake.output.train, "test": snakemake.output.test})
    write_json(snakemake.output.meta, {"archive": archive, "counts": counts,
                                       "expected_per_split": snakemake.params.per_split,
                                       "labels": {"neg": 0, "pos": 1}})
    log.info("IMDB from %s: %s", archive, counts)
