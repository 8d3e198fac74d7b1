from multivec.io import read_jsonl, write_json
from multivec.nugget.configuration import NuggetConfig
from multivec.nugget.sentence_share import sentence_final_share
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    share = sentence_final_share(NuggetConfig.from_dict(snakemake.params.model), read_jsonl(snakemake.input[0]),
                                 source=snakemake.input[0])
    write_json(snakemake.output[0], share)
    log.info("r_sb = %.4f (%d sentence-final of %d tokens; the paper: %s)", share["share"],
             share["sentence_final_tokens"], share["tokens"], share["paper_share"])
