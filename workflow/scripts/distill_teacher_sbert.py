# Structural teacher embeddings (SBERT) of one document set, length-sorted batches.
from multivec.distill.data.documents import read_documents
from multivec.distill.embeddings import write_embeddings
from multivec.distill.teachers.sbert import embed_documents, load_teacher, model_folder
from multivec.training.distributed import resolve_device
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    settings = snakemake.params.settings
    name = snakemake.wildcards.model
    docs = read_documents(snakemake.input.documents)
    # auto: the GPU a paper-scale (SLURM) job was given, else the CPU
    model = load_teacher(name, settings.get("max_seq_length"), device=str(resolve_device("auto")))
    out = embed_documents(model, [d["text"] for d in docs], batch_size=settings["batch_size"])
    write_embeddings(snakemake.output.folder, [d["id"] for d in docs], out.vectors,
                     {"model": name, "folder": model_folder(name), "teacher": "structural",
                      "max_seq_length": out.max_seq_length, "truncated_share": round(out.truncated_share, 4),
                      "truncated": int(out.truncated.sum()), "seconds": round(out.seconds, 2),
                      "documents": snakemake.input.documents})
    log.info("%s on %s: %d documents, %.1f%% truncated at %d tokens, %.1f s", name, snakemake.input.documents,
             len(docs), 100 * out.truncated_share, out.max_seq_length, out.seconds)
