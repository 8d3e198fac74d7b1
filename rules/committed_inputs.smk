# The committed copies of the small JSON files the results tables read besides their unit files (training
# summaries, model configs, embeddings' meta.json, the sentence-final share): results/inputs/<path>, so that a
# clone re-renders every table and verdict from results/ alone (multivec.io.committed_inputs).
from multivec.io.committed_inputs import SOURCE_PATTERN, committed_folder, committed_input, source_of


localrules:
    committed_input,


rule committed_input:
    input:
        lambda wc: source_of(wc.path),
    output:
        "results/inputs/{path}",  # multivec.io.committed_inputs.INPUTS_ROOT
    params:
        source=lambda wc: wc.path,
    log:
        "logs/committed_inputs/{path}.log",
    benchmark:
        "benchmarks/rules/committed_inputs/{path}.tsv"
    wildcard_constraints:
        path=SOURCE_PATTERN,
    conda:
        "../envs/eval.yaml"
    script:
        "../workflow/scripts/committed_input.py"
