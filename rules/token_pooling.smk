# Token pooling (Clavié et al. 2024, PyLate's pool_factor): the base encoder's token states
# (the ColBART row's vectors) pooled by Ward clustering to NUGGET's k = ceil(n·r) vectors per document,
# for every ratio of a `token_pooling` row of table2.rows; scored like the NUGGET rows (MaxSim-mean,
# same candidates) by rules/table2.smk's evaluate_ranking. One job per task pools every ratio from one
# Ward tree per document. Helpers: rules/token_pooling_common.smk.

if TOKEN_POOLING_RATIOS:

    rule token_pooling_encodings:
        input:
            base=f"data/encodings/{BASE_ENCODINGS}/{{task}}",
        output:
            [directory(token_pooling_dir(ratio, "{task}")) for ratio in TOKEN_POOLING_RATIOS],
        params:
            ratios=TOKEN_POOLING_RATIOS,
        log:
            "logs/token_pooling/{task}.log",
        benchmark:
            "benchmarks/rules/token_pooling/{task}.tsv"
        wildcard_constraints:
            task="pi|rr|lee|polarity",  # Table 2's tasks, and the document tasks of the representation matrix
        threads: 1
        resources:
            **family_resources("encode"),
        conda:
            "../envs/eval.yaml"
        script:
            "../workflow/scripts/token_pooling.py"
