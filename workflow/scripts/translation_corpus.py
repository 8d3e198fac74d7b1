import os

from multivec.data.corpora import english_sentence_splitter
from multivec.data.translation_corpus import (TranslationStats, build_translation_corpus_debian,
                                              build_translation_corpus_wmt)
from multivec.data.documents import model_tokenizers
from multivec.io import write_jsonl, write_meta
from multivec.io.resources import data_mirror
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads):
    settings = snakemake.params.settings
    # Count tokens as the model will: its source tokenizer with special tokens, against the limit
    # nugget.max_source_tokens; the target side too when its vocabulary is known before training.
    limits = model_tokenizers(settings, snakemake.params.nugget)
    split = english_sentence_splitter(data_mirror(snakemake.config.get("data_mirror") or None))
    stats = TranslationStats()
    common = dict(dev_size=settings["dev_size"], seed=snakemake.params.seed, max_documents=settings.get("max_documents"),
                  stats=stats, split_sentences=split, min_documents=settings.get("min_documents"),
                  target_tokenizer=limits["target_tokenizer"], max_target_tokens=limits["max_target_tokens"])
    if settings["source"] == "debian_reference":
        inputs = {"debian_reference": list(snakemake.input.debian_reference)}
        train, dev = build_translation_corpus_debian(snakemake.input.debian_reference[0], limits["tokenizer"],
                                                     settings["max_tokens"], **common)
    else:
        inputs = {"wmt19_enzh": list(snakemake.input.wmt19_enzh), "dev": list(snakemake.input.dev)}
        train, dev = build_translation_corpus_wmt(snakemake.input.wmt19_enzh[0], snakemake.input.dev[0],
                                                  limits["tokenizer"], settings["max_tokens"], **common)
    write_jsonl(snakemake.output.train, train)
    write_jsonl(snakemake.output.dev, dev)
    write_meta(os.path.dirname(snakemake.output.train), "translation_corpus", inputs, stats.summary(), stats.warnings,
               source=settings["source"], max_source_tokens=settings["max_tokens"],
               max_target_tokens=limits["max_target_tokens"], min_documents=settings.get("min_documents"))
