# Bindings of NUGGET Table 4's ablations (rules/nugget_ablation.smk) to this run's config; the logic is
# multivec.rules.nugget_ablation. Every row is a model of the zoo (rules/nugget.smk); that the rows agree
# with the zoo's models is checked by the config layer before any job (multivec.config.cross_checks).
from multivec.rules.nugget_ablation import NuggetAblation
from multivec.rules.nugget_zoo import SENTENCE_SHARE

NUGGET_ABLATION = NuggetAblation(config, NUGGET_ZOO, TABLE2, SEED_SETS)
ABLATION_ROWS = NUGGET_ABLATION.rows
ABLATION_LAYERS = NUGGET_ABLATION.layers
ABLATION_PATTERN = NUGGET_ABLATION.pattern
ablation_model_dir = NUGGET_ABLATION.ablation_model_dir
ablation_model_files = NUGGET_ABLATION.ablation_model_files
ablation_encoding_inputs = lambda wildcards: NUGGET_ABLATION.ablation_encoding_inputs(wildcards.name, wildcards.seed,
                                                                                     wildcards.task)
ablation_pooling_evaluations = NUGGET_ABLATION.ablation_pooling_evaluations
ablation_pooling_params = NUGGET_ABLATION.ablation_pooling_params
ablation_evaluations = NUGGET_ABLATION.ablation_evaluations
ablation_ranking_files = NUGGET_ABLATION.ablation_ranking_files

register_stat_table("nugget_table4", "nugget", rows=NUGGET_ABLATION.table4_rows, metrics=["PI", "RR"])
