"""One model zoo for every NUGGET/TSDAE model of the demo and paper pipelines.

Every distinct (objective, r, scorer layer, selector, feedback, seed) trains once, into
``models/nugget/<objective>/<variant>/seed<seed>/``, and every table and figure (Table 2, Figs. 4-8 and 11,
Table 4, Table 3's starting AE models) reads the folder it needs. A variant names what differs between
models of one objective:
- ``r<r>_l<l>_<selector>_<fb|nofb>``: NUGGET at ratio r (``rsb`` = r_sb, the measured share of
  sentence-final tokens, Table 4), scorer layer l (the frozen bottom follows l), selector and feedback; a
  rule selector has no scores, so no residual (§7.1);
- ``tsdae``: the one-vector TSDAE model (mean bottleneck, deletion noise, nothing frozen; Fig. 4's r = 0);
- ``base_r1``: the shared seq2seq starting point (``bottleneck: tokens``, r = 1: the decoder reads every
  token state), trained once per objective, from which every other variant of that objective starts, as
  the paper starts every model from mBART.
Everything else (encoder, decoder, lengths, training settings) is one setting per objective for the whole
zoo, so two tables can never train two different models under one name.
"""

from __future__ import annotations

import re
from typing import Any

from multivec.nugget.configuration import SELECTORS, SENTENCE_RATIO

BASE_VARIANT = "base_r1"
TSDAE_VARIANT = "tsdae"
_NUGGET = re.compile(r"r(?P<ratio>sb|[0-9.]+)_l(?P<layer>[0-9]+)_(?P<selector>" + "|".join(SELECTORS)
                     + r")_(?P<feedback>fb|nofb)")
# The wildcard constraint of the zoo's training rule.
VARIANT_PATTERN = f"{BASE_VARIANT}|{TSDAE_VARIANT}|" + _NUGGET.pattern.replace("(?P<ratio>", "(?:").replace(
    "(?P<layer>", "(?:").replace("(?P<selector>", "(?:").replace("(?P<feedback>", "(?:")


def ratio_text(ratio: float | str) -> str:
    """How a ratio is spelled in a folder name (``0.1``; r_sb as ``sb``)."""
    if ratio == SENTENCE_RATIO:
        return "sb"
    value = float(ratio)
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def nugget_variant(ratio: float | str, scorer_layer: int, selector: str = "learned", feedback: bool = True) -> str:
    """The variant name of a NUGGET model."""
    if selector not in SELECTORS:
        raise ValueError(f"selector {selector!r}: expected one of {SELECTORS}")
    return f"r{ratio_text(ratio)}_l{int(scorer_layer)}_{selector}_{'fb' if feedback else 'nofb'}"


def variant_of(settings: dict[str, Any]) -> str:
    """The variant a NuggetConfig dict (fields of a zoo model) trains into."""
    bottleneck = settings.get("bottleneck", "nuggets")
    if bottleneck == "tokens":
        return BASE_VARIANT
    if bottleneck == "mean":
        return TSDAE_VARIANT
    return nugget_variant(settings["ratio"], settings["scorer_layer"], settings.get("selector", "learned"),
                          settings.get("feedback", True))


def parse_variant(variant: str) -> dict[str, Any]:
    """What a NUGGET variant sets: ratio (float, or ``SENTENCE_RATIO``), scorer_layer, selector, feedback."""
    match = _NUGGET.fullmatch(variant)
    if match is None:
        raise ValueError(f"model variant {variant!r}: expected {BASE_VARIANT!r}, {TSDAE_VARIANT!r} or "
                         "r<ratio|sb>_l<layer>_<selector>_<fb|nofb> (e.g. r0.1_l3_learned_fb)")
    ratio = SENTENCE_RATIO if match["ratio"] == "sb" else float(match["ratio"])
    return {"ratio": ratio, "scorer_layer": int(match["layer"]), "selector": match["selector"],
            "feedback": match["feedback"] == "fb"}


def objective_settings(config: dict[str, Any], objective: str) -> dict[str, Any]:
    """NuggetConfig fields every zoo model of ``objective`` shares, from the workflow's config: ``nugget`` +
    ``nugget_analysis.model`` + ``nugget_analysis.model_by_objective[objective]``, objective included (later
    blocks win)."""
    analysis = config["nugget_analysis"]
    return {**config["nugget"], **analysis["model"], **(analysis.get("model_by_objective") or {}).get(objective, {}),
            "objective": objective}


def zoo_settings(objective_settings: dict[str, Any], variant: str, seed: int, tsdae_noise: float) -> dict[str, Any]:
    """NuggetConfig fields of one zoo model. ``objective_settings``: the zoo's fields for its objective
    (``nugget`` + ``nugget_analysis.model`` + ``.model_by_objective[objective]``, objective included)."""
    settings = {**objective_settings, "seed": int(seed)}
    if variant == BASE_VARIANT:
        settings.update(bottleneck="tokens", ratio=1.0, residual=False, feedback=False, selector="learned",
                        noise_deletion=0.0)
    elif variant == TSDAE_VARIANT:
        settings.update(bottleneck="mean", ratio=1.0, residual=False, feedback=False, selector="learned",
                        frozen_layers=-1, noise_deletion=tsdae_noise)
    else:
        parsed = parse_variant(variant)
        settings.update(bottleneck="nuggets", noise_deletion=0.0, frozen_layers=None, **parsed)
        if parsed["selector"] != "learned":
            settings["residual"] = False  # a rule selector gives no scores (§7.1)
    return settings


def model_settings(config: dict[str, Any], objective: str, variant: str, seed: int) -> dict[str, Any]:
    """NuggetConfig fields of one zoo model from the workflow's config: ``objective_settings`` + the variant
    (``zoo_settings``). The rules and ``benchmarks/paper_shape_step.py`` build every model's settings here."""
    return zoo_settings(objective_settings(config, objective), variant, seed, config["tsdae"]["noise_deletion"])


def model_folder(objective: str, variant: str, seed: int | str) -> str:
    """The folder of one zoo model."""
    return f"models/nugget/{objective}/{variant}/seed{seed}"
