"""The settings each training rule builds, as the config blocks it merges, with the key path of every field.

``nugget_layers`` lists every ``NuggetConfig`` the rules build (Table 2's NUGGET and TSDAE rows, the
longer-trained model of each ``nugget_analysis`` objective and ratio) and ``train_layers`` every
``TrainConfig``; ``merge`` merges them as the rules do, so a check can name the key that set a value.
``nugget_config_problems`` builds each ``NuggetConfig`` and reports its error at that key.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from multivec.config.dataclass_config import ConfigError
from multivec.config.schema import key_path

Fields = dict[str, tuple[Any, str]]  # field -> (value, the config key path that sets it)


def block(path: str, fields: dict | None) -> Fields:
    """The fields of the config block at ``path``, each with its own key path."""
    return {key: (value, f"{path}.{key}") for key, value in (fields or {}).items()}


def merge(layers: Iterable[Fields]) -> tuple[dict, dict[str, str]]:
    """``(merged values, {field: key path of the value kept})``: later layers win, as ``{**a, **b}`` in the rules."""
    values, paths = {}, {}
    for layer in layers:
        for key, (value, path) in layer.items():
            values[key], paths[key] = value, path
    return values, paths


def train_layers(config: dict) -> dict[str, list[Fields]]:
    """Every TrainConfig the rules build, by its block (multivec.rules.nugget_zoo train_config and
    long_train_config, rules/nugget_lm.smk, multivec.rules.distill_students, multivec.rules.subencoder), as the
    blocks they merge."""
    base = block("train", config["train"])
    trainings = {"train": [base]}
    if "nugget_analysis" in config:
        trainings["nugget_analysis.train"] = [base, block("nugget_analysis.train",
                                                          config["nugget_analysis"].get("train"))]
    if "nugget_lm" in config:
        trainings["nugget_lm.train"] = [base, block("nugget_lm.train", config["nugget_lm"].get("train"))]
    for work in ("distill", "subencoder"):
        if "train" in config.get(work, {}):
            trainings[f"{work}.train"] = [block(f"{work}.train", config[work]["train"])]
    return trainings


# The fields the zoo's TSDAE variant (multivec.rules.nugget_zoo tsdae_model_config) sets on top of a NUGGET model's
# config.
TSDAE_FIELDS = {"ratio": 1.0, "bottleneck": "mean", "residual": False, "feedback": False, "frozen_layers": -1}


def nugget_layers(config: dict) -> dict[str, list[Fields]]:
    """Every NuggetConfig the rules build, by what it is for, as the blocks they merge: Table 2's NUGGET
    and TSDAE rows (multivec.rules.nugget_zoo nugget_model_config, tsdae_model_config) and the longer-trained
    model of each ``nugget_analysis`` objective and ratio (long_model_config)."""
    nugget = block("nugget", config["nugget"])
    seed = {"seed": (config["seed"], "seed")}
    tsdae = {key: (value, f"{key} (set for TSDAE by rules/common.smk)") for key, value in TSDAE_FIELDS.items()}
    tsdae.update(block("tsdae", {k: v for k, v in config.get("tsdae", {}).items() if k == "noise_deletion"}))

    models: dict[str, list[Fields]] = {}
    for i, row in enumerate(config["table2"]["rows"]):
        where = key_path(("table2", "rows", i))
        if row.get("kind") == "nugget":
            models[where] = [nugget, block(where, {k: row[k] for k in ("objective", "ratio")}), seed]
        elif row.get("kind") == "tsdae":
            models[where] = [nugget, block(where, {"objective": row["objective"]}), seed, tsdae]
    analysis = config.get("nugget_analysis")
    for objective in (analysis or {}).get("objectives", []):
        by_objective = (analysis.get("model_by_objective") or {}).get(objective)
        for j, ratio in enumerate(analysis["ratios"]):
            chosen = {"objective": (objective, "nugget_analysis.objectives"),
                      "ratio": (ratio, key_path(("nugget_analysis", "ratios", j)))}
            base = [nugget, chosen, seed, tsdae] if ratio == 0 else [nugget, chosen, seed]
            models[f"nugget_analysis {objective}_r{ratio}"] = [
                *base, block("nugget_analysis.model", analysis.get("model")),
                block(f"nugget_analysis.model_by_objective.{objective}", by_objective)]
    return models


def _blocks(layers: list[Fields]) -> str:
    """The config blocks a merged config was built from, e.g. ``nugget + nugget_analysis.model``."""
    names = []
    for layer in layers:
        for key, (_, path) in layer.items():
            if key in ("objective", "ratio", "seed"):  # from the model's path, not from a block
                continue
            name = path.rsplit(".", 1)[0] if "." in path and " " not in path else None
            if name and name not in names:
                names.append(name)
    return " + ".join(names)


def nugget_config_problems(config: dict) -> list[str]:
    """Build every NuggetConfig the rules build; report its error at the config key that set the field."""
    from multivec.nugget.configuration import NuggetConfig

    found: dict[tuple[str, str], dict[str, list[str]]] = {}  # (key path, error) -> {blocks: the models it breaks}
    for what, layers in nugget_layers(config).items():
        values, paths = merge(layers)
        try:
            NuggetConfig.from_dict(values)
        except ConfigError as err:
            match = re.match(r"NuggetConfig\.(\w+)=", str(err))
            key = match.group(1) if match else None
            where = paths.get(key, f"{key} (NuggetConfig's default)") if key else _blocks(layers)
            found.setdefault((where, str(err)), {}).setdefault(_blocks(layers), []).append(what)
    return [f"{where}: {err}; in the model config of "
            + "; ".join(f"{', '.join(models)} (built from {blocks})" for blocks, models in by_blocks.items())
            for (where, err), by_blocks in found.items()]

