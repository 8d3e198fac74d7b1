# Bindings of the sub-sentence encoder's rules (Chen et al. 2023) to this run's config:
# rules/subencoder_data.smk (training data, Table 7) and rules/subencoder.smk (model, Tables 1, 3-5, 8).
# The logic is multivec.rules.subencoder.
from multivec.rules import subencoder as _subencoder
from multivec.rules.subencoder import (SEGMENTER_MODEL, SUBENC_CATEGORY, SUBENCODER_DATA_DIR,
                                          subencoder_model_dir)

SUBENCODER_WORK = _subencoder.Subencoder(config, SEED_SETS)
# -- data construction
SUBENCODER = SUBENCODER_WORK.settings
SUBDATA = SUBENCODER_WORK.data
SUBSEG = SUBENCODER_WORK.segmenter
PROPSEGMENT_FILE = _subencoder.propsegment_file
subencoder_pairs_input = lambda wildcards: SUBENCODER_WORK.subencoder_pairs_input()
subencoder_segments_inputs = lambda wildcards: SUBENCODER_WORK.subencoder_segments_inputs()
subencoder_table7_inputs = lambda wildcards: SUBENCODER_WORK.subencoder_table7_inputs()
# -- model and evaluation
SUBENC_BACKBONES = SUBENCODER_WORK.backbones
SUBENC_ENCODERS = SUBENCODER_WORK.encoders
SUBENC_SEGMENTER = SUBENCODER_WORK.evaluation_segmenter
PROPSEGMENT_DEV = SUBENCODER_WORK.propsegment_dev
SUBENC_CSTS = SUBENCODER_WORK.csts
SUBENC_RETRIEVAL_TABLES = SUBENCODER_WORK.retrieval_tables
SUBENC_TABLES = SUBENCODER_WORK.tables
subencoder_model_config = SUBENCODER_WORK.subencoder_model_config
subencoder_train_config = SUBENCODER_WORK.subencoder_train_config
subencoder_unit_entries = SUBENCODER_WORK.subencoder_unit_entries
subencoder_table_inputs = lambda wildcards: SUBENCODER_WORK.subencoder_table_inputs()
# results/subencoder_<table>.<ext>, flagged for the report with its caption (workflow/report/).
subencoder_table_output = lambda table, ext: report(**_subencoder.table_output(table, ext))

for _table in SUBENCODER_WORK.stat_tables():
    register_stat_table(**_table)
for _audited, _entries in zip((AUDIT_CORPORA, AUDIT_TASKS), SUBENCODER_WORK.audit_entries()):
    _audited.update(_entries)
