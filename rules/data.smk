# Raw data: download from upstream, or copy from the local mirror (config data_mirror /
# $MULTIVEC_DATA_MIRROR). Sources, URLs and sha256 live in src/multivec/data/sources.py.
# A download is keyed on the file's identity (registered sha256 / URL), not on where the
# mirror lies: jobs find the mirror through the absolute $MULTIVEC_DATA_MIRROR that
# rules/common.smk exports.
from multivec.data.download import file_identity


localrules:
    download,
    gensim_test_data,


rule download:
    output:
        "data/raw/{source}/{file}",
    params:
        identity=lambda wc: file_identity(wc.source, wc.file),
    log:
        "logs/download/{source}/{file}.log",
    benchmark:
        "benchmarks/rules/download/{source}/{file}.tsv"
    wildcard_constraints:
        source=REGISTERED_SOURCES,
        file=".+",
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/download.py"


rule gensim_test_data:
    # Real text that ships inside gensim's wheel (106 Wikipedia articles, the Lee corpus).
    output:
        "data/raw/gensim/{name}",
    log:
        "logs/gensim_test_data/{name}.log",
    benchmark:
        "benchmarks/rules/gensim_test_data/{name}.tsv"
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/gensim_test_data.py"


rule autoencoding_corpus:
    # English documents of <= max_tokens subwords, never breaking a sentence (NUGGET AE).
    input:
        unpack(autoencoding_inputs),
    output:
        train=corpus("ae", "train"),
        dev=corpus("ae", "dev"),
        meta="data/built/corpora/autoencoding/meta.json",
    params:
        settings=config["corpora"]["autoencoding"],
        nugget=config["nugget"],  # the encoder/target tokenizers that measure the documents
        seed=config["seed"],
    log:
        "logs/corpora/autoencoding.log",
    benchmark:
        "benchmarks/rules/corpora/autoencoding.tsv"
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/autoencoding_corpus.py"


rule translation_corpus:
    # English -> Chinese documents of <= max_tokens source subwords (NUGGET MT).
    input:
        unpack(translation_inputs),
    output:
        train=corpus("mt", "train"),
        dev=corpus("mt", "dev"),
        meta="data/built/corpora/translation/meta.json",
    params:
        settings=config["corpora"]["translation"],
        nugget=config["nugget"],  # the encoder/target tokenizers that measure the documents
        seed=config["seed"],
    log:
        "logs/corpora/translation.log",
    benchmark:
        "benchmarks/rules/corpora/translation.tsv"
    threads: family_threads("build")
    resources:
        **family_resources("build"),
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/translation_corpus.py"


rule extract_archive:
    # Paper-scale sources ship as archives (WikiText-103 raw, ParaBank v1.0).
    input:
        lambda wc: ARCHIVES[wc.source],
    output:
        "data/extracted/{source}/{member}",
    log:
        "logs/extract/{source}/{member}.log",
    benchmark:
        "benchmarks/rules/extract/{source}/{member}.tsv"
    wildcard_constraints:
        source="|".join(ARCHIVES),
        member=".+",
    resources:
        **family_resources("build"),
    conda:
        "../envs/data.yaml"
    script:
        "../workflow/scripts/extract_archive.py"
