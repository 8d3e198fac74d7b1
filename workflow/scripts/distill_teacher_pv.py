# Contextual teacher: one Paragraph Vector variant trained on the training documents; infer_vector
# for the evaluation documents. PYTHONHASHSEED is fixed first (infer_vector seeds with hash()).
from multivec.distill.paragraph_vector import ensure_hash_seed

ensure_hash_seed(snakemake.params.hash_seed)

from multivec.distill.documents import read_documents  # noqa: E402
from multivec.distill.embeddings import write_embeddings  # noqa: E402
from multivec.distill.paragraph_vector import PVVariant, train_and_infer  # noqa: E402
from multivec.workflow import rule_logging  # noqa: E402

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    variant = PVVariant.from_config(snakemake.params.variant, epochs=snakemake.params.epochs,
                                    seed=snakemake.params.seed)
    train = read_documents(snakemake.input.train)
    unseen = {split: read_documents(path) for split, path in zip(snakemake.params.splits, snakemake.input.evaluation)}
    result = train_and_infer(variant, [d["text"] for d in train], {s: [d["text"] for d in rows]
                                                                   for s, rows in unseen.items()})
    meta = {"model": variant.name, "teacher": "contextual", "parts": [vars(p) for p in variant.parts],
            "epochs": variant.epochs, "seed": variant.seed, "hash_seed": snakemake.params.hash_seed,
            "vocabulary": result.vocabulary, "truncated_share": 0.0}
    write_embeddings(snakemake.output.train, [d["id"] for d in train], result.train_vectors,
                     {**meta, "how": "trained", "seconds": round(result.seconds, 2)})
    for split, folder in zip(snakemake.params.splits, snakemake.output.evaluation):
        write_embeddings(folder, [d["id"] for d in unseen[split]], result.inferred[split],
                         {**meta, "how": "infer_vector", "seconds": 0.0})
    log.info("%s: %d-d, %d training documents, %.1f s", variant.name, variant.dimension, len(train), result.seconds)
