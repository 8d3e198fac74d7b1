# Path helpers and config look-ups of NUGGET Table 4's ablations (rules/nugget_ablation.smk).
# NUGGET (l = 3) is models/nugget_long/mt_r0.1/seed<seed>; every other row trains into
# models/nugget_ablation/<name>/seed<seed>/.
from multivec.nugget.configuration import SENTENCE_RATIO as _SENTENCE_RATIO
from multivec.nugget.configuration import NuggetConfig as _NuggetConfig
from multivec.nugget.configuration import ablation_config as _ablation_config
from multivec.nugget.configuration import ablation_settings as _ablation_settings

ABLATION_ROWS = config["nugget_ablation"]["rows"]
ABLATION_LAYERS = {int(paper): ours for paper, ours in config["nugget_ablation"]["layers"].items()}
ABLATION_DEFAULT = "nugget_l3"  # the model of models/nugget_long/mt_r0.1
SENTENCE_SHARE = "data/built/corpora/translation/sentence_final_share.json"


def ablation_base(seed=None):
    """NuggetConfig fields every ablation starts from: those of the longer-trained MT r = 0.1 model."""
    return long_model_config("mt", "0.1", seed)


def ablation_model_config(name, seed=None):
    """The row's NuggetConfig fields; r_sb rows keep ratio "r_sb" until train_nugget.py reads the share."""
    return _ablation_settings(name, ablation_base(seed), layers=ABLATION_LAYERS)


# Fail before any job: every row must build, and NUGGET (l = 3) must be the reused model's config.
for _name in ABLATION_ROWS:
    _ablation_config(_name, ablation_base(), layers=ABLATION_LAYERS)
if (_ablation_config(ABLATION_DEFAULT, ablation_base(), layers=ABLATION_LAYERS).to_dict()
        != _NuggetConfig.from_dict(ablation_base()).to_dict()):
    raise ValueError("nugget_ablation: NUGGET (l = 3) must be models/nugget_long/mt_r0.1, but the Table 4 defaults "
                     "(MT, r = 0.1, learned selector, feedback, frozen bottom = l, nugget_ablation.layers['3']) "
                     "differ from that model's config (nugget + nugget_analysis.model)")


def ablation_model_dir(name, seed):
    if name == ABLATION_DEFAULT:
        return long_model_dir("mt", "0.1", seed)
    return f"models/nugget_ablation/{name}/seed{seed}"


def ablation_model_files(name, seed):
    if name == ABLATION_DEFAULT:
        return long_model_files("mt", "0.1", seed)
    d = ablation_model_dir(name, seed)
    return {"weights": f"{d}/model.safetensors", "config": f"{d}/config.json",
            "summary": f"{d}/training_summary.json", "metrics": f"{d}/metrics.csv"}


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


ABLATION_TRAINED = [n for n in ABLATION_ROWS if n != ABLATION_DEFAULT]
register_stat_table("nugget_table4", "nugget", rows=ABLATION_ROWS, metrics=["PI", "RR"])


def ablation_evaluations(seeds, suffix="json"):
    """Every ablation row's evaluation file at each seed (`json`: MRR; `rankings.jsonl`: per query)."""
    return expand("results/nugget_table4/{name}/seed{seed}/{task}.{suffix}", name=ABLATION_ROWS, seed=seeds,
                  task=TASKS, suffix=suffix)


def ablation_ranking_files(seedset):
    """(rankings file, row, seed, task) of every ablation run of a seed set (units_nugget_table4's inputs)."""
    return [(f"results/nugget_table4/{name}/seed{seed}/{task}.rankings.jsonl", name, seed, task)
            for name in seedset_rows("nugget_table4", seedset, ABLATION_ROWS) for seed in model_seeds(seedset)
            for task in TASKS]
ABLATION_PATTERN = "|".join(re.escape(n) for n in ABLATION_ROWS)
