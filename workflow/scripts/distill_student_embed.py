"""Snakemake script: embed one task's documents with a (trained or untrained) student
(rules/distill.smk, rules distill_student_embed and distill_untrained_embed)."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)  # noqa: F821
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

from pathlib import Path  # noqa: E402

from multivec.distill.configuration import StudentConfig  # noqa: E402
from multivec.distill.training import embed_documents  # noqa: E402

params = snakemake.params  # noqa: F821
weights = getattr(snakemake.input, "weights", None)  # noqa: F821
meta = embed_documents(snakemake.input.documents, snakemake.output.folder,  # noqa: F821
                       model_dir=Path(weights).parent if weights else None,
                       student_config=None if weights else StudentConfig.from_dict(params.student),
                       batch_size=params.batch_size, threads=snakemake.threads,  # noqa: F821
                       teacher_limit=params.teacher_limit)
logging.getLogger("distill").info("done: %s", meta)
