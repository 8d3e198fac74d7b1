# Path helpers and config look-ups shared by every .smk file. The library (src/multivec)
# does the work; this file only names files.
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

# Fails before any job, naming the key, when the configured mirror does not exist. A
# relative mirror path is resolved against the directory snakemake was started from (not
# --directory's), then exported as an absolute $MULTIVEC_DATA_MIRROR that every job
# inherits: rules never carry the mirror's location, so moving the mirror re-runs nothing.
MIRROR = _pin_data_mirror(config.get("data_mirror") or None, base=_caller_directory(workflow.overwrite_workdir))
# The registry overlay (sha256/size of the rehearsal's fixture files; multivec.data.sources), exported the same way.
_pin_registry_overlay(config.get("registry_overlay") or None, MIRROR)

ROWS = {row["name"]: row for row in config["table2"]["rows"]}
TASKS = ["pi", "rr"]
TRAINED_KINDS = {"nugget", "tsdae"}
REGISTERED_SOURCES = "|".join(SOURCES)


def raw(source, file):
    """A downloaded (or mirrored) file of a registered source."""
    return f"data/raw/{source}/{file}"


def corpus(objective, split):
    """Training documents for an objective: ae (autoencoding) or mt (translation)."""
    name = {"ae": "autoencoding", "mt": "translation"}[objective]
    return f"data/built/corpora/{name}/{split}.jsonl"


def task_dir(task):
    return f"data/built/tasks/{task}"


SEED_PATTERN = "[0-9]+"  # a training seed in a path: models/.../seed<seed>/

# The NUGGET/TSDAE model zoo (issue 18, multivec.nugget.zoo): every distinct (objective, r, scorer layer,
# selector, feedback, seed) trains once, into models/nugget/<objective>/<variant>/seed<seed>/, and every
# table and figure reads the folder it needs. Every model of an objective starts from that objective's
# shared r = 1 seq2seq model (variant base_r1), trained once at the data seed (`seed`), as every model of
# the paper starts from one mBART checkpoint.
from multivec.nugget import zoo as _zoo

ZOO_VARIANT_PATTERN = _zoo.VARIANT_PATTERN
BASE_SEED = config["seed"]


def zoo_dir(objective, variant, seed):
    return _zoo.model_folder(objective, variant, seed)


def zoo_files(objective, variant, seed):
    d = zoo_dir(objective, variant, seed)
    return {"weights": f"{d}/model.safetensors", "config": f"{d}/config.json",
            "summary": f"{d}/training_summary.json", "metrics": f"{d}/metrics.csv"}


def base_dir(objective):
    """The shared r = 1 seq2seq model every model of `objective` starts from."""
    return zoo_dir(objective, _zoo.BASE_VARIANT, BASE_SEED)


def zoo_model_config(objective, variant, seed=None):
    """NuggetConfig fields of one zoo model (r_sb variants keep ratio "r_sb" until train_nugget.py reads it)."""
    return _zoo.model_settings(config, objective, variant, training_seed(seed))


def zoo_train_config(variant, seed=None):
    """TrainConfig fields of a zoo model: `train` + `nugget_analysis.train` (+ `nugget_base.train` for the base)."""
    settings = {**train_config(seed), **config["nugget_analysis"]["train"]}
    if variant == _zoo.BASE_VARIANT:
        settings.update(config["nugget_base"]["train"])
    return settings


def zoo_train_inputs(wildcards):
    """A zoo model's corpus, the shared r = 1 model it starts from (not for the base itself), and r_sb's share
    for Table 4's sentence-ratio rows (SENTENCE_SHARE: rules/nugget_ablation_common.smk)."""
    inputs = {"train": corpus(wildcards.objective, "train"), "dev": corpus(wildcards.objective, "dev")}
    if wildcards.variant != _zoo.BASE_VARIANT:
        inputs["init"] = f"{base_dir(wildcards.objective)}/model.safetensors"
    if wildcards.variant.startswith("rsb_"):  # Table 4's r_sb rows: the measured share is the ratio
        inputs["sentence_share"] = SENTENCE_SHARE
    return inputs


def figure_model_inputs(wildcards):
    """The dev corpus and the zoo model of (objective, ratio, seed)."""
    return {"dev": corpus(wildcards.objective, "dev"),
            **long_model_files(wildcards.objective, wildcards.ratio, wildcards.seed)}


def row_variant(row):
    """The zoo variant of a Table 2 row: NUGGET at the `nugget` block's scorer layer, selector and feedback."""
    if row["kind"] == "tsdae":
        return _zoo.TSDAE_VARIANT
    nugget = config["nugget"]
    return _zoo.nugget_variant(row["ratio"], nugget["scorer_layer"], nugget["selector"], nugget["feedback"])


def model_dir(row_name, seed):
    """Folder of a trained Table 2 row's model at one training seed (a zoo folder)."""
    row = ROWS[row_name]
    if row["kind"] not in TRAINED_KINDS:
        raise ValueError(f"row {row_name!r} of kind {row['kind']!r} is not trained")
    return zoo_dir(row["objective"], row_variant(row), seed)


def model_files(row_name, seed):
    row = ROWS[row_name]
    model_dir(row_name, seed)  # refuses untrained rows
    return zoo_files(row["objective"], row_variant(row), seed)


def memory_use_models():
    """The models whose memory use is measured: Table 2's trained rows at the first tables seed, then each of
    their objectives' shared r = 1 model; name -> {objective, folder}."""
    seed = model_seeds("tables")[0]
    models = {name: {"objective": ROWS[name]["objective"], "folder": model_dir(name, seed)}
              for name in trained_row_names()}
    for objective in sorted({m["objective"] for m in models.values()}):
        models[f"{objective}_base_r1"] = {"objective": objective, "folder": base_dir(objective)}
    return models


def trained_row_names():
    return [name for name, row in ROWS.items() if row["kind"] in TRAINED_KINDS]


def row_run(row_name, seed=None):
    """One evaluation run of a Table 2 row: a trained row at one seed (`<row>/seed<seed>`), else the row."""
    return f"{row_name}/seed{seed}" if ROWS[row_name]["kind"] in TRAINED_KINDS else row_name


def parse_run(run):
    """(row name, seed or None) of a `row_run`."""
    trained = re.fullmatch(r"(.+)/seed([0-9]+)", run)
    return (trained.group(1), int(trained.group(2))) if trained else (run, None)


def table2_runs(seeds):
    """Every run of Table 2's rows: trained rows once per seed, the others once."""
    return [row_run(name, seed) for name, row in ROWS.items()
            for seed in (seeds if row["kind"] in TRAINED_KINDS else [None])]


def encodings_dir(run, task):
    """A trained row has its own encodings per seed; ColBART and mean-pooled rows share the base encoder's;
    a token-pooling row reads the base states pooled at its ratio (rules/token_pooling.smk)."""
    row, _ = parse_run(run)
    if ROWS[row]["kind"] == "token_pooling":
        return token_pooling_dir(ROWS[row]["ratio"], task)
    encoder = run if ROWS[row]["kind"] in TRAINED_KINDS else BASE_ENCODINGS
    return f"data/encodings/{encoder}/{task}"


def evaluation_inputs(wildcards):
    """A run's ranking needs the task and, unless it is BM25, the run's encodings."""
    inputs = {
        "docs": f"{task_dir(wildcards.task)}/docs.txt",
        "task": f"{task_dir(wildcards.task)}/task.jsonl",
    }
    if ROWS[parse_run(wildcards.run)[0]]["kind"] != "bm25":
        inputs["encodings"] = encodings_dir(wildcards.run, wildcards.task)
    return inputs


def encoding_inputs(wildcards):
    """Encoding a task needs the task and, for a trained row's run, its model."""
    inputs = {
        "docs": f"{task_dir(wildcards.task)}/docs.txt",
        "task": f"{task_dir(wildcards.task)}/task.jsonl",
    }
    if wildcards.encoder != BASE_ENCODINGS:
        row, seed = parse_run(wildcards.encoder)
        inputs.update(model_files(row, seed))
        if shares_frozen_bottom(row):
            inputs["frozen_bottom"] = frozen_bottom_dir(wildcards.task)
    return inputs


def frozen_bottom_dir(task):
    """Token states after the frozen bottom (embeddings + layers 1..l) of every document of a task."""
    return f"data/frozen_bottom/{task}"


def shares_frozen_bottom(row_name):
    """A NUGGET row whose layers up to the scorer are frozen (pretrained) reuses the task's shared bottom."""
    row = ROWS[row_name]
    if not config["table2"]["share_frozen_bottom"] or row["kind"] != "nugget":
        return False
    settings = nugget_model_config(row["objective"], row["ratio"])
    frozen = settings.get("frozen_layers")
    return frozen is None or frozen >= settings["scorer_layer"]


def frozen_bottom_config():
    """NuggetConfig fields the shared bottom depends on (encoder, architecture, src_lang, scorer layer;
    the seed initialises tiny random encoders), and the target tokenizer, without which NuggetConfig refuses
    mBART (its default 'bpe' is not mBART's; the paper DAG's frozen_bottom_states failed so, issue 21)."""
    settings = nugget_model_config("ae", 1.0)
    return {key: settings[key] for key in ("encoder", "architecture", "src_lang", "scorer_layer", "seed",
                                           "target_tokenizer")}


def table2_evaluations(seeds, suffix="json"):
    """Every run's evaluation file (`json`: MRR; `rankings.jsonl`: per query) over these training seeds."""
    return expand("results/table2/{run}/{task}.{suffix}", run=table2_runs(seeds), task=TASKS, suffix=suffix)


def claimed_rows(table):
    """Rows of `table` that some claim of statistics.claims_file names (rules/statistics_common.smk)."""
    from multivec.statistics.claims_file import load_claims, references

    return {ref.row for claim in load_claims(claims_file()) for ref in references(claim["rule"], str(claim["id"]))
            if ref.table == table}


def seedset_rows(table, seedset, rows):
    """The rows of a table's unit file over a seed set: every row for `tables`; for `claims`, the rows a
    claim names (only they are trained at the claim seeds), in table order."""
    if seedset == "tables":
        return list(rows)
    named = claimed_rows(table)
    return [row for row in rows if row in named]


def table2_ranking_files(seedset):
    """(rankings file, row, seed, task) of every Table 2 run of a seed set (units_table2's inputs)."""
    seeds = model_seeds(seedset)
    return [(f"results/table2/{row_run(name, seed)}/{task}.rankings.jsonl", name, seed, task)
            for name in seedset_rows("table2", seedset, ROWS)
            for seed in (seeds if ROWS[name]["kind"] in TRAINED_KINDS else [None]) for task in TASKS]


# Each rule names the resource family it uses (train, encode or build, from the config's `resources`), e.g.
#     threads: family_threads("encode")
#     resources:
#         **family_resources("encode", gpu=True),
# with gpu=True only where the rule uses a GPU; see multivec.pipeline.rule_resources.
def family_threads(family):
    return _resource_families.family_threads(config["resources"], family)


def family_resources(family, gpu=False):
    return _resource_families.family_resources(config["resources"], family, gpu=gpu)


def family_gpu(family):
    return _resource_families.family_gpu(config["resources"], family)


# Raw files each corpus source needs (names as in src/multivec/data/sources.py).
GENSIM_ENWIKI = "data/raw/gensim/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
SOURCE_FILES = {
    "wikitext2": [raw("wikitext2", "valid.txt"), raw("wikitext2", "test.txt")],
    "wikitext103": ["data/extracted/wikitext103_raw/wikitext-103-raw/wiki.train.raw"],
    "gensim_enwiki": [GENSIM_ENWIKI],
    "debian_reference": [raw("debian_reference", "pairs.jsonl")],
    "wmt19_enzh": [raw("wmt19_enzh", "news-commentary-v14.en-zh.tsv.gz")],
    "wmt19_enzh_dev": [raw("wmt19_enzh", "dev.tgz")],
    "parabank_v1": ["data/extracted/parabank_v1/full/parabank.tsv"],
}

ARCHIVES = {
    "wikitext103_raw": raw("wikitext103_raw", "wikitext-103-raw-v1.zip"),
    "parabank_v1": raw("parabank_v1", "parabank-1.0-full.zip"),
}


def autoencoding_inputs(wildcards):
    return {name: SOURCE_FILES[name] for name in config["corpora"]["autoencoding"]["sources"]}


def translation_inputs(wildcards):
    source = config["corpora"]["translation"]["source"]
    inputs = {source: SOURCE_FILES[source]}
    if source == "wmt19_enzh":
        inputs["dev"] = SOURCE_FILES["wmt19_enzh_dev"]
    return inputs


def pi_task_inputs(wildcards):
    if config["table2"]["pi"]["source"] == "released":
        return {
            "docs": raw("nugget_pi", "dev/docs.txt"),
            "task": raw("nugget_pi", "dev/task.jsonl"),
        }
    return {"parabank": SOURCE_FILES["parabank_v1"]}


def rr_task_inputs(wildcards):
    return SOURCE_FILES[config["table2"]["rr"]["source"]]


def training_seed(seed):
    """A model's training seed: the path's `seed<seed>`, or the data seed `seed` where none is given."""
    return config["seed"] if seed is None else int(seed)


def nugget_model_config(objective, ratio, seed=None):
    """NuggetConfig fields of the zoo's NUGGET model at ratio r (the `nugget` block's l, selector, feedback)."""
    nugget = config["nugget"]
    return zoo_model_config(objective, _zoo.nugget_variant(ratio, nugget["scorer_layer"], nugget["selector"],
                                                           nugget["feedback"]), seed)


def train_config(seed=None):
    """TrainConfig fields: the `train` block with the model's training seed."""
    return {**config["train"], "seed": training_seed(seed)}


def tsdae_model_config(objective, seed=None):
    """TSDAE: the same encoder-decoder with a single mean-pooled vector and deletion noise."""
    return zoo_model_config(objective, _zoo.TSDAE_VARIANT, seed)


_TRAINED_RUN = "(?:" + "|".join(re.escape(n) for n in trained_row_names()) + f")/seed{SEED_PATTERN}"
ENCODER_PATTERN = f"{re.escape(BASE_ENCODINGS)}|{_TRAINED_RUN}"
RUN_PATTERN = "|".join([_TRAINED_RUN, *(re.escape(n) for n in ROWS if n not in trained_row_names())])


# Overlap audit (rules/audit.smk): every training corpus x every evaluation task the DAG builds.
# One entry per corpus or task: {"format": a reader of multivec.data.overlap, "files": [...]}.
AUDIT_CORPORA = {
    "ae": {"format": "training_jsonl", "files": [corpus("ae", "train"), corpus("ae", "dev")]},
    "mt": {"format": "training_jsonl", "files": [corpus("mt", "train"), corpus("mt", "dev")]},
}
AUDIT_TASKS = {
    task: {"format": "ranking_task", "files": [f"{task_dir(task)}/docs.txt", f"{task_dir(task)}/task.jsonl"]}
    for task in TASKS
}


def audit_inputs():
    """Every file of every audited corpus and task."""
    return sorted({f for spec in [*AUDIT_CORPORA.values(), *AUDIT_TASKS.values()] for f in spec["files"]})


# NUGGET beyond Table 2 (figures, Table 3, Table 4): the zoo's models, as Table 2's.
LONG_RATIOS = [str(r) for r in config["nugget_analysis"]["ratios"]]
LONG_OBJECTIVES = config["nugget_analysis"]["objectives"]


def long_variant(ratio):
    """The zoo variant of Fig. 4's model at ratio r (0: the one-vector TSDAE model)."""
    if float(ratio) == 0:
        return _zoo.TSDAE_VARIANT
    nugget = config["nugget"]
    return _zoo.nugget_variant(ratio, nugget["scorer_layer"], nugget["selector"], nugget["feedback"])


def long_model_dir(objective, ratio, seed):
    """The zoo folder of the figures' model at (objective, ratio); ratio "0" is the one-vector (TSDAE) model."""
    return zoo_dir(objective, long_variant(ratio), seed)


def long_model_files(objective, ratio, seed):
    return zoo_files(objective, long_variant(ratio), seed)


def long_model_config(objective, ratio, seed=None):
    """NuggetConfig fields of the figures' model at (objective, ratio) (a zoo model)."""
    return zoo_model_config(objective, long_variant(ratio), seed)


def long_train_config(seed=None):
    """TrainConfig fields of every zoo model but the base: `train` + `nugget_analysis.train`."""
    return zoo_train_config("any", seed)


def long_rows():
    """Fig. 4's rows, `<objective>_r<ratio>`, as its unit file names them."""
    return [f"{o}_r{r}" for o in LONG_OBJECTIVES for r in LONG_RATIOS]


def fig4_hypothesis_files(seedset):
    """(decoded dev documents JSONL, row, seed, objective) of every Fig. 4 model of a seed set."""
    rows = seedset_rows("nugget_fig4", seedset, long_rows())
    return [(f"results/nugget_analysis/bleu/{o}_r{r}/seed{seed}.jsonl", f"{o}_r{r}", seed, o)
            for o in LONG_OBJECTIVES for r in LONG_RATIOS if f"{o}_r{r}" in rows for seed in model_seeds(seedset)]


def fig5_document_files(seedset, ratio):
    """(per-document selections JSONL, row = objective, seed) of Fig. 5's models (at `ratio`) of a seed set."""
    return [(f"results/nugget_analysis/selected_tokens/{o}_r{ratio}/seed{seed}.jsonl", o, seed)
            for o in seedset_rows("nugget_fig5", seedset, LONG_OBJECTIVES) for seed in model_seeds(seedset)]


# Raw eq. 9 gains of one document length, from the AE model of one training seed (rules/nugget_gain.smk).
GAIN_FILE = "results/nugget_analysis/probability_gain/seed{seed}/len{length}.safetensors"


def gain_files(seedset, lengths):
    """(gains file, row = len<L>, seed) of every document length of a seed set (units_nugget_fig7_8)."""
    rows = seedset_rows("nugget_fig7_8", seedset, [f"len{length}" for length in lengths])
    return [(GAIN_FILE.format(seed=seed, length=length), f"len{length}", seed) for length in lengths
            if f"len{length}" in rows for seed in model_seeds(seedset)]

