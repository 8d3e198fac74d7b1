# The representation matrix's index sizes (results/representation_sizes.json), measured once where the
# encodings and documents are.
from multivec.evaluation.representation_matrix import size_of, sizes_record
from multivec.io import write_json
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    sizes = {(name, task): size_of(source) for name, by_task in snakemake.params.sizes.items()
             for task, source in by_task.items()}
    write_json(snakemake.output[0], sizes_record(sizes))
    log.info("%d sizes of %d representations", len(sizes), len(snakemake.params.sizes))
