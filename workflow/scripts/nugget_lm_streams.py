"""Continuous text streams of the NUGGET LM (Table 3): training/dev from the AE corpus (or WikiText-103
train/valid at paper scale), test from WikiText, as real text with <unk> as the NUGGET encoder tokenizer's
unknown token (multivec.nugget.lm_data)."""
from functools import partial

from multivec.nugget.lm_data import training_streams, wikitext_streams, write_streams
from multivec.io.resources import load_tokenizer
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0]) as log:
    unknown_token = load_tokenizer(snakemake.params.encoder).unk_token
    read_wikitext_streams = partial(wikitext_streams, unknown_token=unknown_token)
    read_training = training_streams if snakemake.params.train_source == "autoencoding" else read_wikitext_streams
    for split in ("train", "dev"):
        streams = read_training(snakemake.input[split])
        write_streams(streams, snakemake.output[split])
        log.info("%s: %d streams, %d words", split, len(streams), sum(len(s.text.split()) for s in streams))
    test = read_wikitext_streams(snakemake.input.test)
    write_streams(test, snakemake.output.test)
    words = [w for s in test for w in s.text.split()]
    log.info("test: %d streams, %d words, %d of them with the unknown token %r (left out of perplexity)",
             len(test), len(words), sum(unknown_token in w for w in words), unknown_token)
