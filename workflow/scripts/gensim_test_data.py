import shutil

from multivec.data.download import gensim_test_file
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    source = gensim_test_file(snakemake.wildcards.name)
    log.info("copying %s", source)
    shutil.copyfile(source, snakemake.output[0])
