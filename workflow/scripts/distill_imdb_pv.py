# Paragraph Vector for documents embedded after the teachers' run: action "train" trains one variant on
# the distillation training documents and saves it; action "infer" embeds the IMDB splits with the saved
# model (train then test). PYTHONHASHSEED is fixed first (infer_vector seeds with hash()).
from multivec.distill.paragraph_vector import ensure_hash_seed

ensure_hash_seed(snakemake.params.hash_seed)

import time  # noqa: E402

import numpy as np  # noqa: E402

from multivec.distill.documents import read_documents  # noqa: E402
from multivec.distill.embeddings import write_embeddings  # noqa: E402
from multivec.distill.paragraph_vector import (PVVariant, infer_part, load_models, save_models,  # noqa: E402
                                               train_part)
from multivec.workflow import rule_logging  # noqa: E402

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    if snakemake.params.action == "train":
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
    else:
        variant, models = load_models(snakemake.input.model)
        for path, folder in zip(snakemake.input.documents, snakemake.output.folders):
            docs = read_documents(path)
            start = time.time()
            vectors = np.concatenate([infer_part(m, p, [d["text"] for d in docs])
                                      for m, p in zip(models, variant.parts)], axis=1)
            write_embeddings(folder, [d["id"] for d in docs], vectors,
                             {"model": variant.name, "teacher": "contextual", "how": "infer_vector",
                              "parts": [vars(p) for p in variant.parts], "saved_model": snakemake.input.model,
                              "hash_seed": snakemake.params.hash_seed, "truncated_share": 0.0,
                              "seconds": round(time.time() - start, 2), "documents": path})
            log.info("%s on %s: %d documents, %.1f s", variant.name, path, len(docs), time.time() - start)
