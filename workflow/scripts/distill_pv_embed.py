# Contextual teacher embeddings from a saved Paragraph Vector variant: the training documents' own vectors
# (when the rule has a `train` input) and infer_vector of each evaluation set, in the rule's order.
# PYTHONHASHSEED is fixed first (infer_vector seeds with hash()).
from multivec.distill.paragraph_vector import ensure_hash_seed

ensure_hash_seed(snakemake.params.hash_seed)

import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from multivec.distill.documents import read_documents  # noqa: E402
from multivec.distill.embeddings import write_embeddings  # noqa: E402
from multivec.distill.paragraph_vector import infer_sets, load_models, trained_vectors  # noqa: E402
from multivec.workflow import rule_logging  # noqa: E402

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    variant, models = load_models(snakemake.input.model)
    saved = json.loads((Path(snakemake.input.model) / "variant.json").read_text(encoding="utf-8"))
    meta = {"model": variant.name, "teacher": "contextual", "parts": [vars(p) for p in variant.parts],
            "epochs": variant.epochs, "seed": variant.seed, "hash_seed": snakemake.params.hash_seed,
            "vocabulary": saved.get("vocabulary"), "saved_model": snakemake.input.model, "truncated_share": 0.0}
    if "train" in snakemake.input.keys():
        train = read_documents(snakemake.input.train)
        write_embeddings(snakemake.output.train, [d["id"] for d in train], trained_vectors(models, len(train)),
                         {**meta, "how": "trained", "seconds": saved.get("seconds", 0.0)})
    unseen = {path: read_documents(path) for path in snakemake.input.evaluation}
    start = time.time()
    inferred = infer_sets(variant, models, {path: [d["text"] for d in docs] for path, docs in unseen.items()})
    seconds = round(time.time() - start, 2)
    for (path, docs), folder in zip(unseen.items(), snakemake.output.evaluation):
        write_embeddings(folder, [d["id"] for d in docs], inferred[path],
                         {**meta, "how": "infer_vector", "seconds": seconds, "documents": path})
        log.info("%s on %s: %d documents", variant.name, path, len(docs))
    log.info("%s: %d document sets inferred in %.1f s", variant.name, len(unseen), seconds)
