# Contextual teacher: one Paragraph Vector variant trained on the distillation training documents and
# saved without pickle (models/paragraph_vector/<variant>: variant.json, part<i>.safetensors + part<i>.json);
# every document set is embedded from it by distill_pv_embed.py.
# PYTHONHASHSEED is fixed first (infer_vector seeds with hash(); the saved model is inferred with it).
from multivec.distill.teachers.paragraph_vector import ensure_hash_seed

ensure_hash_seed(snakemake.params.hash_seed)

import time  # noqa: E402

from multivec.distill.data.documents import read_documents  # noqa: E402
from multivec.distill.teachers.paragraph_vector import PVVariant, save_models, train_part  # noqa: E402
from multivec.pipeline.script_support import rule_logging  # noqa: E402

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    variant = PVVariant.from_config(snakemake.params.variant, epochs=snakemake.params.epochs,
                                    seed=snakemake.params.seed)
    texts = [d["text"] for d in read_documents(snakemake.input.train)]
    start = time.time()
    models = [train_part(part, texts, variant.epochs, variant.seed) for part in variant.parts]
    save_models(snakemake.output.folder, variant, models,
                {"hash_seed": snakemake.params.hash_seed, "documents": snakemake.input.train,
                 "n_documents": len(texts), "vocabulary": [len(m.wv) for m in models],
                 "seconds": round(time.time() - start, 2)})
    log.info("%s: %d-d, %d training documents, %.1f s", variant.name, variant.dimension, len(texts),
             time.time() - start)
