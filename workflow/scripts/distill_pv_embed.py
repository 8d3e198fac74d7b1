# Contextual teacher embeddings from a saved Paragraph Vector variant: the training documents' own vectors
# (when the rule has a `train` input) and infer_vector of each evaluation set, in the rule's order.
# PYTHONHASHSEED is fixed first (infer_vector seeds with hash()).
from multivec.distill.teachers.paragraph_vector import ensure_hash_seed

ensure_hash_seed(snakemake.params.hash_seed)

from multivec.distill.data.documents import read_documents  # noqa: E402
from multivec.distill.embeddings import write_embeddings  # noqa: E402
from multivec.distill.teachers.paragraph_vector import infer_sets, load_models, trained_vectors  # noqa: E402
from multivec.pipeline.script_support import rule_logging  # noqa: E402

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    variant, models, saved = load_models(snakemake.input.model)
    meta = {"model": variant.name, "teacher": "contextual", "parts": [vars(p) for p in variant.parts],
            "epochs": variant.epochs, "seed": variant.seed, "hash_seed": snakemake.params.hash_seed,
            "vocabulary": saved.get("vocabulary"), "saved_model": snakemake.input.model, "truncated_share": 0.0}
    if "train" in snakemake.input.keys():
        train = read_documents(snakemake.input.train)
        write_embeddings(snakemake.output.train, [d["id"] for d in train], trained_vectors(models, len(train)),
                         {**meta, "how": "trained", "seconds": saved.get("seconds", 0.0)})
    unseen = {path: read_documents(path) for path in snakemake.input.evaluation}
    texts = {path: [d["text"] for d in docs] for path, docs in unseen.items()}
    inferred, seconds = infer_sets(variant, models, texts)
    for (path, docs), folder in zip(unseen.items(), snakemake.output.evaluation):
        # each set's own inference time: the teachers' table sums them with the training seconds
        write_embeddings(folder, [d["id"] for d in docs], inferred[path],
                         {**meta, "how": "infer_vector", "seconds": round(seconds[path], 2), "documents": path})
        log.info("%s on %s: %d documents, %.1f s", variant.name, path, len(docs), seconds[path])
