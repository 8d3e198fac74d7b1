# Bindings of rules/nugget_lm.smk (Table 3, NUGGET section 6.2) to this run's config: settings, inputs and the
# audit registration. The logic is multivec.rules.nugget_lm.
from multivec.nugget.lm_table3 import table3_metrics as _table3_metrics
from multivec.rules.nugget_lm import LM_DIR, NuggetLM

NUGGET_LM_TABLE = NuggetLM(config, NUGGET_ZOO, SEED_SETS)
NUGGET_LM = NUGGET_LM_TABLE.settings
LM_ROWS = NUGGET_LM_TABLE.rows
lm_stream_inputs = lambda wildcards: NUGGET_LM_TABLE.lm_stream_inputs()
lm_ae_model = NUGGET_LM_TABLE.lm_ae_model
lm_histories = NUGGET_LM_TABLE.lm_histories
lm_segment_files = NUGGET_LM_TABLE.lm_segment_files
lm_settings = NUGGET_LM_TABLE.lm_settings

for _audited, _entries in zip((AUDIT_CORPORA, AUDIT_TASKS), NUGGET_LM_TABLE.audit_entries()):
    _audited.update(_entries)

register_stat_table("nugget_table3", "nugget", rows=list(LM_ROWS), metrics=_table3_metrics(lm_histories()))
