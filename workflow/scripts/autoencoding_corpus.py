import os

from multivec.data.corpora import read_paragraphs
from multivec.data.documents import PackingStats, build_autoencoding_corpus
from multivec.data.documents import model_tokenizers
from multivec.io import write_jsonl, write_meta
from multivec.io.resources import data_mirror
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads):
    settings = snakemake.params.settings
    inputs = {name: list(snakemake.input[name]) for name in settings["sources"]}
    stats = PackingStats()
    # a registered source's copy that shrank warns into stats.warnings, hence meta.json
    sources = [read_paragraphs(name, path, stats.warnings) for name, paths in inputs.items() for path in paths]
    # documents fit nugget.max_source_tokens as the model tokenizes them (special tokens included)
    tokenizer = model_tokenizers(settings, snakemake.params.nugget, target=False)["tokenizer"]
    train, dev = build_autoencoding_corpus(
        sources, tokenizer, settings["max_tokens"], dev_size=settings["dev_size"],
        seed=snakemake.params.seed, max_documents=settings.get("max_documents"),
        mirror=data_mirror(snakemake.config.get("data_mirror") or None), stats=stats,
        min_documents=settings.get("min_documents"))
    write_jsonl(snakemake.output.train, train)
    write_jsonl(snakemake.output.dev, dev)
    write_meta(os.path.dirname(snakemake.output.train), "autoencoding_corpus", inputs, stats.summary(),
               stats.warnings, max_source_tokens=settings["max_tokens"], min_documents=settings.get("min_documents"))
