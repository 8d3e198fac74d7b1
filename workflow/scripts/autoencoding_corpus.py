from multivec.data.corpora import read_paragraphs
from multivec.data.documents import build_autoencoding_corpus
from multivec.io import write_jsonl
from multivec.resources import data_mirror, load_tokenizer
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads):
    settings = snakemake.params.settings
    sources = [read_paragraphs(name, path) for name in settings["sources"] for path in snakemake.input[name]]
    train, dev = build_autoencoding_corpus(
        sources, load_tokenizer(settings["tokenizer"]), settings["max_tokens"], dev_size=settings["dev_size"],
        seed=snakemake.params.seed, max_documents=settings.get("max_documents"),
        mirror=data_mirror(snakemake.config.get("data_mirror") or None))
    write_jsonl(snakemake.output.train, train)
    write_jsonl(snakemake.output.dev, dev)
