# Path helpers and config look-ups of NUGGET Table 4's ablations (rules/nugget_ablation.smk).
# Every row is a model of the zoo (rules/nugget.smk): NUGGET (l = 3) is the MT r = 0.1 model of Table 2 and
# Fig. 4, and rows whose settings coincide (smoke: l = 6, 9 map to l = 3) read one folder.
from multivec.nugget.configuration import SENTENCE_RATIO as _SENTENCE_RATIO
from multivec.nugget.configuration import NuggetConfig as _NuggetConfig
from multivec.nugget.configuration import ablation_config as _ablation_config
from multivec.nugget.configuration import ablation_settings as _ablation_settings

ABLATION_ROWS = config["nugget_ablation"]["rows"]
ABLATION_LAYERS = {int(paper): ours for paper, ours in config["nugget_ablation"]["layers"].items()}
ABLATION_DEFAULT = "nugget_l3"  # the zoo's MT r = 0.1 model (Table 2, Fig. 4)
SENTENCE_SHARE = "data/built/corpora/translation/sentence_final_share.json"


def ablation_base(seed=None):
    """NuggetConfig fields every ablation starts from: those of the zoo's MT r = 0.1 model."""
    return long_model_config("mt", "0.1", seed)


def ablation_model_config(name, seed=None):
    """The row's NuggetConfig fields; r_sb rows keep ratio "r_sb" until train_nugget.py reads the share."""
    return _ablation_settings(name, ablation_base(seed), layers=ABLATION_LAYERS)


def ablation_variant(name):
    """The zoo variant of a Table 4 row."""
    return _zoo.variant_of(ablation_model_config(name))


# Fail before any job: every row must build, and NUGGET (l = 3) must be the zoo's MT r = 0.1 model.
for _name in ABLATION_ROWS:
    _ablation_config(_name, ablation_base(), layers=ABLATION_LAYERS)
if ablation_variant(ABLATION_DEFAULT) != long_variant("0.1"):
    raise ValueError("nugget_ablation: NUGGET (l = 3) must be the MT r = 0.1 model of Table 2 and Fig. 4, but the "
                     "Table 4 defaults (MT, r = 0.1, learned selector, feedback, nugget_ablation.layers['3']) name "
                     f"{ablation_variant(ABLATION_DEFAULT)}, not {long_variant('0.1')}")
for _name in ABLATION_ROWS:
    _zoo_settings = zoo_model_config("mt", ablation_variant(_name))
    _row_settings = ablation_model_config(_name)
    if _zoo_settings != _row_settings:
        _diff = sorted(k for k in set(_zoo_settings) | set(_row_settings) if _zoo_settings.get(k) != _row_settings.get(k))
        raise ValueError(f"nugget_ablation row {_name!r}: its settings differ from the zoo model "
                         f"{ablation_variant(_name)} in {_diff}")


def ablation_model_dir(name, seed):
    return zoo_dir("mt", ablation_variant(name), seed)


def ablation_model_files(name, seed):
    return zoo_files("mt", ablation_variant(name), seed)


def ablation_uses_sentence_share(name):
    return ablation_model_config(name)["ratio"] == _SENTENCE_RATIO


def ablation_shares_frozen_bottom(name):
    """Only rows whose frozen bottom is Table 2's (embeddings + layers 1..nugget.scorer_layer) read it."""
    cfg = _ablation_config(name, ablation_base(), layers=ABLATION_LAYERS)
    return (config["table2"]["share_frozen_bottom"] and cfg.scorer_layer == config["nugget"]["scorer_layer"]
            and cfg.frozen_bottom >= cfg.scorer_layer)


def ablation_encoding_inputs(wildcards):
    inputs = {"docs": f"{task_dir(wildcards.task)}/docs.txt", "task": f"{task_dir(wildcards.task)}/task.jsonl",
              **ablation_model_files(wildcards.name, wildcards.seed)}
    if ablation_shares_frozen_bottom(wildcards.name):
        inputs["frozen_bottom"] = frozen_bottom_dir(wildcards.task)
    return inputs


# Table 4's token-pooling row (issue 18): Table 2's token_pooling row at Table 4's r, read from Table 2's
# evaluation (results/table2/<run>/<task>.*; pooled and scored once). No model, so no seed: one run.
ABLATION_POOLING = "token_pooling"
_ablation_ratio = float(ablation_base()["ratio"])
_pooling_runs = [name for name, row in ROWS.items()
                 if row["kind"] == "token_pooling" and float(row["ratio"]) == _ablation_ratio]
ABLATION_POOLING_RUN = row_run(_pooling_runs[0], None) if _pooling_runs else None
TABLE4_ROWS = ABLATION_ROWS + ([ABLATION_POOLING] if ABLATION_POOLING_RUN else [])

register_stat_table("nugget_table4", "nugget", rows=TABLE4_ROWS, metrics=["PI", "RR"])


def ablation_pooling_evaluations(suffix="json"):
    """Table 2's evaluation files of the token-pooling row at Table 4's r (empty when Table 2 has none)."""
    if ABLATION_POOLING_RUN is None:
        return []
    return expand("results/table2/{run}/{task}.{suffix}", run=ABLATION_POOLING_RUN, task=TASKS, suffix=suffix)


def ablation_pooling_params():
    """The token-pooling row for nugget_ablation_table.py: its Table 4 name, Table 2 run and ratio (or None)."""
    if ABLATION_POOLING_RUN is None:
        return None
    return {"row": ABLATION_POOLING, "run": ABLATION_POOLING_RUN, "ratio": _ablation_ratio}


def ablation_evaluations(seeds, suffix="json"):
    """Every ablation row's evaluation file at each seed (`json`: MRR; `rankings.jsonl`: per query)."""
    return expand("results/nugget_table4/{name}/seed{seed}/{task}.{suffix}", name=ABLATION_ROWS, seed=seeds,
                  task=TASKS, suffix=suffix)


def ablation_ranking_files(seedset):
    """(rankings file, row, seed, task) of every Table 4 run of a seed set (units_nugget_table4's inputs)."""
    rows = seedset_rows("nugget_table4", seedset, TABLE4_ROWS)
    files = [(f"results/nugget_table4/{name}/seed{seed}/{task}.rankings.jsonl", name, seed, task)
             for name in rows if name != ABLATION_POOLING for seed in model_seeds(seedset) for task in TASKS]
    if ABLATION_POOLING in rows:  # Table 2's rankings of the token-pooling run, under Table 4's row name
        files += [(f"results/table2/{ABLATION_POOLING_RUN}/{task}.rankings.jsonl", ABLATION_POOLING, None, task)
                  for task in TASKS]
    return files
ABLATION_PATTERN = "|".join(re.escape(n) for n in ABLATION_ROWS)
