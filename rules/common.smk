# Bindings shared by every .smk file: the workflow's import path and data mirror, then the names the rules use
# for paths, Table 2's runs, NUGGET's zoo and figures, bound to this run's config. The logic lives in
# multivec.rules (paths, seed_sets, nugget_zoo, nugget_table2, nugget_figures) and
# multivec.pipeline.rule_resources; the library (src/multivec) does the work; the rule files only name files.
import os
import re
import sys

SRC = os.path.join(workflow.basedir, "src")
if SRC not in sys.path:
    sys.path.insert(0, SRC)
# Jobs (local, conda or SLURM) import the package from this checkout: we set PYTHONPATH
# for them rather than require it (so no `envvars:` assertion).
os.environ.update(
    PYTHONPATH=os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH", "")) if p)
)

from multivec.data.sources import SOURCES
from multivec.nugget.tables.encoding_folders import BASE_ENCODINGS
from multivec.io.resources import pin_data_mirror as _pin_data_mirror
from multivec.io.resources import pin_registry_overlay as _pin_registry_overlay
from multivec.training.safety_net import rule_settings, safety_net_resource
from multivec.pipeline.script_support import caller_directory as _caller_directory
from multivec.pipeline import rule_resources as _resource_families
from multivec.rules import paths as _paths
from multivec.rules.paths import (ARCHIVES, GENSIM_ENWIKI, REGISTERED_SOURCES, SEED_PATTERN, SOURCE_FILES,
                                     TASKS, corpus, frozen_bottom_dir, raw, task_dir, token_pooling_dir)
from multivec.nugget import zoo as _zoo  # the zoo's variants (rules/nugget.smk: _zoo.BASE_VARIANT)
from multivec.rules.nugget_zoo import ZOO_VARIANT_PATTERN, NuggetZoo, zoo_files
from multivec.rules.nugget_table2 import Table2Runs, parse_run
from multivec.rules.nugget_figures import GAIN_FILE, GAIN_FILE_VECTORS_ONLY, NuggetFigures

# Fails before any job, naming the key, when the configured mirror does not exist. A
# relative mirror path is resolved against the directory snakemake was started from (not
# --directory's), then exported as an absolute $MULTIVEC_DATA_MIRROR that every job
# inherits: rules never carry the mirror's location, so moving the mirror re-runs nothing.
MIRROR = _pin_data_mirror(config.get("data_mirror") or None, base=_caller_directory(workflow.overwrite_workdir))
# The registry overlay (sha256/size of the rehearsal's fixture files; multivec.data.sources), exported the same way.
_pin_registry_overlay(config.get("registry_overlay") or None, MIRROR)

# Each rule names the resource family it uses (train, encode or build, from the config's `resources`), e.g.
#     threads: family_threads("encode")
#     resources:
#         **family_resources("encode", gpu=True),
# with gpu=True only where the rule uses a GPU; see multivec.pipeline.rule_resources.
family_threads = lambda family: _resource_families.family_threads(config["resources"], family)
family_resources = lambda family, gpu=False: _resource_families.family_resources(config["resources"], family, gpu=gpu)
family_gpu = lambda family: _resource_families.family_gpu(config["resources"], family)

# Data: the raw files each corpus and task reads (multivec.rules.paths).
autoencoding_inputs = lambda wildcards: _paths.autoencoding_inputs(config)
translation_inputs = lambda wildcards: _paths.translation_inputs(config)
pi_task_inputs = lambda wildcards: _paths.pi_task_inputs(config)
rr_task_inputs = lambda wildcards: _paths.rr_task_inputs(config)

# Overlap audit (rules/audit.smk): every training corpus x every evaluation task the DAG builds; each work's
# rules add theirs (multivec.rules.paths.audit_corpora).
AUDIT_CORPORA = _paths.audit_corpora()
AUDIT_TASKS = _paths.audit_tasks()
audit_inputs = lambda: _paths.audit_inputs(AUDIT_CORPORA, AUDIT_TASKS)

# NUGGET's model zoo (multivec.rules.nugget_zoo): Table 2's trained rows and the figures' models.
NUGGET_ZOO = NuggetZoo(config)
ROWS = NUGGET_ZOO.rows
BASE_SEED = NUGGET_ZOO.base_seed
zoo_model_config = NUGGET_ZOO.zoo_model_config
zoo_train_config = NUGGET_ZOO.zoo_train_config
zoo_train_inputs = lambda wildcards: NUGGET_ZOO.zoo_train_inputs(wildcards.objective, wildcards.variant)
train_config = NUGGET_ZOO.train_config
trained_row_names = NUGGET_ZOO.trained_row_names
model_dir = NUGGET_ZOO.model_dir
model_files = NUGGET_ZOO.model_files
frozen_bottom_config = NUGGET_ZOO.frozen_bottom_config
long_model_dir = NUGGET_ZOO.long_model_dir
long_model_files = NUGGET_ZOO.long_model_files
long_model_config = NUGGET_ZOO.long_model_config
figure_model_inputs = lambda wildcards: NUGGET_ZOO.figure_model_inputs(wildcards.objective, wildcards.ratio,
                                                                       wildcards.seed)

# Table 2's runs, encodings and evaluations (multivec.rules.nugget_table2); model_seeds: rules/statistics_common.smk.
TABLE2 = Table2Runs(config, NUGGET_ZOO, SEED_SETS)
ENCODER_PATTERN = TABLE2.encoder_pattern
RUN_PATTERN = TABLE2.run_pattern
TOKEN_POOLING_RATIOS = TABLE2.token_pooling_ratios
evaluation_inputs = lambda wildcards: TABLE2.evaluation_inputs(wildcards.run, wildcards.task)
encoding_inputs = lambda wildcards: TABLE2.encoding_inputs(wildcards.encoder, wildcards.task)
table2_evaluations = TABLE2.table2_evaluations
table2_ranking_files = TABLE2.table2_ranking_files
memory_use_models = TABLE2.memory_use_models

# NUGGET beyond Table 2 (figures, Table 3, Table 4): the zoo's models (multivec.rules.nugget_figures).
NUGGET_FIGURES = NuggetFigures(config, SEED_SETS)
LONG_RATIOS = NUGGET_FIGURES.ratios
LONG_OBJECTIVES = NUGGET_FIGURES.objectives
long_rows = NUGGET_FIGURES.long_rows
fig4_hypothesis_files = NUGGET_FIGURES.fig4_hypothesis_files
fig5_document_files = NUGGET_FIGURES.fig5_document_files
gain_files = NUGGET_FIGURES.gain_files
