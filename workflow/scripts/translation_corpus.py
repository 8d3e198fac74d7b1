from multivec.data.translation_corpus import build_translation_corpus_debian, build_translation_corpus_wmt
from multivec.io import write_jsonl
from multivec.resources import load_tokenizer
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads):
    settings = snakemake.params.settings
    tokenizer = load_tokenizer(settings["tokenizer"])
    common = dict(dev_size=settings["dev_size"], seed=snakemake.params.seed, max_documents=settings.get("max_documents"))
    if settings["source"] == "debian_reference":
        train, dev = build_translation_corpus_debian(snakemake.input.debian_reference[0], tokenizer,
                                                     settings["max_tokens"], **common)
    else:
        train, dev = build_translation_corpus_wmt(snakemake.input.wmt19_enzh[0], snakemake.input.dev[0], tokenizer,
                                                  settings["max_tokens"], **common)
    write_jsonl(snakemake.output.train, train)
    write_jsonl(snakemake.output.dev, dev)
