"""NUGGET's work (Qin & Van Durme 2023): the model zoo's folders and settings as the rules name them, for
Table 2's trained rows, the figures' models (Fig. 4's ratios) and the shared frozen bottom (formerly in
rules/common.smk). The zoo itself (variants, folders, merged settings) is multivec.nugget.zoo.

Every distinct (objective, r, scorer layer, selector, feedback, seed) trains once, into
models/nugget/<objective>/<variant>/seed<seed>/, and every table and figure reads the folder it needs. Every
model of an objective starts from that objective's shared r = 1 seq2seq model (variant base_r1), trained once
at the data seed (``seed``), as every model of the paper starts from one mBART checkpoint.

The rule files build one ``NuggetZoo`` from the config (rules/common.smk) and bind its methods to the names
the rules use.
"""

from __future__ import annotations

from typing import Any, Mapping

from multivec.nugget import zoo as _zoo
from multivec.rules.paths import corpus

TRAINED_KINDS = {"nugget", "tsdae"}  # Table 2's row kinds that train a model
ZOO_VARIANT_PATTERN = _zoo.VARIANT_PATTERN
# Table 4's r_sb rows train at the measured share of sentence-final tokens of the translation corpus.
SENTENCE_SHARE = "data/built/corpora/translation/sentence_final_share.json"


def zoo_dir(objective: str, variant: str, seed: Any) -> str:
    """The folder of one zoo model."""
    return _zoo.model_folder(objective, variant, seed)


def zoo_files(objective: str, variant: str, seed: Any) -> dict[str, str]:
    """The files a zoo model's training writes: weights, config, training summary, metrics."""
    d = zoo_dir(objective, variant, seed)
    return {"weights": f"{d}/model.safetensors", "config": f"{d}/config.json",
            "summary": f"{d}/training_summary.json", "metrics": f"{d}/metrics.csv"}


class NuggetZoo:
    """The zoo's models as the config sets them: Table 2's rows (``table2.rows``) and the figures' ratios."""

    def __init__(self, config: Mapping[str, Any]):
        self.config = config
        self.rows = {row["name"]: row for row in config["table2"]["rows"]}  # Table 2's rows by name
        self.base_seed = config["seed"]  # the shared r = 1 models train at the data seed

    # -- settings
    def training_seed(self, seed: Any = None) -> int:
        """A model's training seed: the path's `seed<seed>`, or the data seed `seed` where none is given."""
        return self.config["seed"] if seed is None else int(seed)

    def train_config(self, seed: Any = None) -> dict[str, Any]:
        """TrainConfig fields: the `train` block with the model's training seed."""
        return {**self.config["train"], "seed": self.training_seed(seed)}

    def zoo_model_config(self, objective: str, variant: str, seed: Any = None) -> dict[str, Any]:
        """NuggetConfig fields of one zoo model (r_sb variants keep ratio "r_sb" until train_nugget.py reads it)."""
        return _zoo.model_settings(self.config, objective, variant, self.training_seed(seed))

    def zoo_train_config(self, variant: str, seed: Any = None) -> dict[str, Any]:
        """TrainConfig fields of a zoo model: `train` + `nugget_analysis.train` (+ `nugget_base.train` for the
        base)."""
        settings = {**self.train_config(seed), **self.config["nugget_analysis"]["train"]}
        if variant == _zoo.BASE_VARIANT:
            settings.update(self.config["nugget_base"]["train"])
        return settings

    def nugget_variant(self, ratio: Any) -> str:
        """The zoo variant of a NUGGET model at ratio r with the `nugget` block's scorer layer, selector, feedback."""
        nugget = self.config["nugget"]
        return _zoo.nugget_variant(ratio, nugget["scorer_layer"], nugget["selector"], nugget["feedback"])

    def nugget_model_config(self, objective: str, ratio: Any, seed: Any = None) -> dict[str, Any]:
        """NuggetConfig fields of the zoo's NUGGET model at ratio r (the `nugget` block's l, selector, feedback)."""
        return self.zoo_model_config(objective, self.nugget_variant(ratio), seed)

    def tsdae_model_config(self, objective: str, seed: Any = None) -> dict[str, Any]:
        """TSDAE: the same encoder-decoder with a single mean-pooled vector and deletion noise."""
        return self.zoo_model_config(objective, _zoo.TSDAE_VARIANT, seed)

    # -- the shared r = 1 models and training inputs
    def base_dir(self, objective: str) -> str:
        """The shared r = 1 seq2seq model every model of `objective` starts from."""
        return zoo_dir(objective, _zoo.BASE_VARIANT, self.base_seed)

    def zoo_train_inputs(self, objective: str, variant: str) -> dict[str, str]:
        """A zoo model's corpus, the shared r = 1 model it starts from (not for the base itself), and r_sb's
        share for Table 4's sentence-ratio rows (SENTENCE_SHARE)."""
        inputs = {"train": corpus(objective, "train"), "dev": corpus(objective, "dev")}
        if variant != _zoo.BASE_VARIANT:
            inputs["init"] = f"{self.base_dir(objective)}/model.safetensors"
        if variant.startswith("rsb_"):  # Table 4's r_sb rows: the measured share is the ratio
            inputs["sentence_share"] = SENTENCE_SHARE
        return inputs

    # -- Table 2's trained rows
    def trained_row_names(self) -> list[str]:
        return [name for name, row in self.rows.items() if row["kind"] in TRAINED_KINDS]

    def row_variant(self, row: Mapping[str, Any]) -> str:
        """The zoo variant of a Table 2 row: NUGGET at the `nugget` block's scorer layer, selector and feedback."""
        if row["kind"] == "tsdae":
            return _zoo.TSDAE_VARIANT
        return self.nugget_variant(row["ratio"])

    def model_dir(self, row_name: str, seed: Any) -> str:
        """Folder of a trained Table 2 row's model at one training seed (a zoo folder). The rules ask only for
        trained rows (ENCODER_PATTERN, trained_row_names); another row is a caller's error, not a config one."""
        row = self.rows[row_name]
        if row["kind"] not in TRAINED_KINDS:
            raise ValueError(f"row {row_name!r} of kind {row['kind']!r} is not trained")
        return zoo_dir(row["objective"], self.row_variant(row), seed)

    def model_files(self, row_name: str, seed: Any) -> dict[str, str]:
        row = self.rows[row_name]
        self.model_dir(row_name, seed)  # refuses untrained rows
        return zoo_files(row["objective"], self.row_variant(row), seed)

    # -- the shared frozen bottom (Table 2, Table 4)
    def shares_frozen_bottom(self, row_name: str) -> bool:
        """A NUGGET row whose layers up to the scorer are frozen (pretrained) reuses the task's shared bottom."""
        row = self.rows[row_name]
        if not self.config["table2"]["share_frozen_bottom"] or row["kind"] != "nugget":
            return False
        settings = self.nugget_model_config(row["objective"], row["ratio"])
        frozen = settings.get("frozen_layers")
        return frozen is None or frozen >= settings["scorer_layer"]

    def frozen_bottom_config(self) -> dict[str, Any]:
        """NuggetConfig fields the shared bottom depends on (encoder, architecture, src_lang, scorer layer;
        the seed initialises tiny random encoders), and the target tokenizer, without which NuggetConfig refuses
        mBART (its default 'bpe' is not mBART's; the paper DAG's frozen_bottom_states failed so in the rehearsal)."""
        settings = self.nugget_model_config("ae", 1.0)
        return {key: settings[key] for key in ("encoder", "architecture", "src_lang", "scorer_layer", "seed",
                                               "target_tokenizer")}

    # -- the figures' models (Fig. 4's ratios; Figs. 5-8, Tables 3 and 4 read some of them)
    def long_variant(self, ratio: Any) -> str:
        """The zoo variant of Fig. 4's model at ratio r (0: the one-vector TSDAE model)."""
        if float(ratio) == 0:
            return _zoo.TSDAE_VARIANT
        return self.nugget_variant(ratio)

    def long_model_dir(self, objective: str, ratio: Any, seed: Any) -> str:
        """The zoo folder of the figures' model at (objective, ratio); ratio "0" is the one-vector (TSDAE) model."""
        return zoo_dir(objective, self.long_variant(ratio), seed)

    def long_model_files(self, objective: str, ratio: Any, seed: Any) -> dict[str, str]:
        return zoo_files(objective, self.long_variant(ratio), seed)

    def long_model_config(self, objective: str, ratio: Any, seed: Any = None) -> dict[str, Any]:
        """NuggetConfig fields of the figures' model at (objective, ratio) (a zoo model)."""
        return self.zoo_model_config(objective, self.long_variant(ratio), seed)

    def long_train_config(self, seed: Any = None) -> dict[str, Any]:
        """TrainConfig fields of every zoo model but the base: `train` + `nugget_analysis.train`."""
        return self.zoo_train_config("any", seed)

    def figure_model_inputs(self, objective: str, ratio: Any, seed: Any) -> dict[str, str]:
        """The dev corpus and the zoo model of (objective, ratio, seed)."""
        return {"dev": corpus(objective, "dev"), **self.long_model_files(objective, ratio, seed)}
