from multivec.data.overlap import audit_overlap, check_overlap, overlap_markdown, write_overlap
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    settings = snakemake.params.settings
    results = audit_overlap(snakemake.params.corpora, snakemake.params.tasks, ngram=settings["ngram"],
                            max_document_share=settings["max_document_share"])
    write_overlap(results, snakemake.output.csv, snakemake.output.md)
    log.info("\n%s", overlap_markdown(results))
    check_overlap(results)  # raises (the job fails, naming corpus, task and documents) above the threshold
