import os

import torch

from multivec.subencoder.model import SubEncoder
from multivec.subencoder.pca_projection import with_pca_projection
from multivec.subencoder.training import read_sentences
from multivec.pipeline.script_support import rule_logging

with rule_logging(snakemake.log[0], threads=snakemake.threads) as log:
    source = os.path.dirname(snakemake.input.weights)
    device = "cuda" if torch.cuda.is_available() else "cpu"  # paper scale encodes every training proposition
    model, fit = with_pca_projection(SubEncoder.load(source, device=device), read_sentences(snakemake.input.train),
                                     int(snakemake.wildcards.dim))
    model.to("cpu").save_pretrained(os.path.dirname(snakemake.output.weights), {"pca": {**fit, "source_model": source}})
    log.info("%s -> %d-d PCA fitted on %d training propositions, keeping %.1f%% of their variance", source,
             fit["dim"], fit["fit_propositions"], 100 * fit["variance_kept"])
