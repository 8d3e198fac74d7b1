"""Continuous text streams of the NUGGET LM (Table 3): training/dev from the AE corpus (or WikiText-103
train/valid at paper scale), test from WikiText (multivec.nugget.lm_data)."""
from multivec.nugget.lm_data import training_streams, wikitext_streams, write_streams
from multivec.workflow import rule_logging

with rule_logging(snakemake.log[0]) as log:
    read_training = training_streams if snakemake.params.train_source == "autoencoding" else wikitext_streams
    for split in ("train", "dev"):
        streams = read_training(snakemake.input[split])
        write_streams(streams, snakemake.output[split])
        log.info("%s: %d streams, %d words", split, len(streams), sum(len(s.text.split()) for s in streams))
    test = wikitext_streams(snakemake.input.test)
    write_streams(test, snakemake.output.test)
    log.info("test: %d streams, %d words", len(test), sum(len(s.text.split()) for s in test))
