"""Keys consistent with each other: pairs of settings the code relies on, each message naming both key
paths (warm-up within training, dev set below the corpus size, minimums below maximums, the figures' ratios
among the trained ones, Table 4's rows the zoo's models, the sub-sentence encoder's segmenter and row names, a
comparison given once), and ratios that print as the model folders they name.
"""

from __future__ import annotations

import re
from typing import Any

from multivec.config.merged_settings import merge, nugget_layers, train_layers
from multivec.config.schema import key_path, unique_problems

# Text a ratio must print as: the training rule's wildcard constraint (rules/nugget.smk).
RATIO_TEXT = re.compile(r"[0-9.]+")


def ratio_text_problem(path: str, ratio: Any, folder: str) -> str | None:
    """A ratio must print as plain decimal digits that read back as itself: it names a model folder."""
    text = str(ratio)
    if RATIO_TEXT.fullmatch(text) and float(text) == ratio:
        return None
    return (f"{path}: {ratio!r} prints as {text!r}, which does not name a model folder ({folder.format(text)}); "
            "allowed: a ratio written with plain decimal digits (e.g. 0.00001, not 1e-05)")


def ratio_problems(config: dict) -> list[str]:
    """Ratios that name model folders: Table 2's rows and ``nugget_analysis.ratios``."""
    problems = []
    for i, row in enumerate(config["table2"]["rows"]):
        if row.get("kind") == "nugget" and "ratio" in row:
            problems.append(ratio_text_problem(key_path(("table2", "rows", i, "ratio")), row["ratio"],
                                               f"models/nugget/{row.get('objective')}_r{{}}/seed<seed>"))
    for j, ratio in enumerate(config.get("nugget_analysis", {}).get("ratios", [])):
        problems.append(ratio_text_problem(key_path(("nugget_analysis", "ratios", j)), ratio,
                                           "models/nugget_long/<objective>_r{}/seed<seed>"))
    return [p for p in problems if p]


def _at_most(problems: list, small_path: str, small: Any, large_path: str, large: Any, why: str,
             strict: bool = False) -> None:
    """Append a problem when ``small`` > ``large`` (``>=`` with ``strict``); None on either side is no limit."""
    if small is None or large is None:
        return
    if small > large or (strict and small == large):
        relation = "below" if strict else "at most"
        problems.append(f"{small_path}: {small} must be {relation} {large_path} ({large}): {why}")


def consistency_problems(config: dict) -> list[str]:
    """Pairs of keys the code relies on; each message names both key paths."""
    problems: list[str] = []
    for name, layers in train_layers(config).items():
        values, paths = merge(layers)
        if "warmup_steps" in values and "max_steps" in values:
            _at_most(problems, paths["warmup_steps"], values["warmup_steps"], paths["max_steps"], values["max_steps"],
                     f"the warm-up must end within the training of {name} (TrainConfig)")
    for corpus in ("autoencoding", "translation"):
        settings = config["corpora"][corpus]
        where = f"corpora.{corpus}"
        _at_most(problems, f"{where}.dev_size", settings.get("dev_size"), f"{where}.max_documents",
                 settings.get("max_documents"), "the dev set would leave no training documents", strict=True)
        _at_most(problems, f"{where}.min_documents", settings.get("min_documents"), f"{where}.max_documents",
                 settings.get("max_documents"), "the corpus keeps at most max_documents, so the minimum always warns")
        source_limit = config["nugget"].get("max_source_tokens")
        _at_most(problems, f"{where}.max_tokens", settings.get("max_tokens"), "nugget.max_source_tokens",
                 source_limit, "training documents are built to the former and cut to the latter (raise "
                 f"nugget.max_source_tokens or lower {where}.max_tokens; allowed: 1..{source_limit})")
    for task in ("pi", "rr"):
        settings = config["table2"][task]
        _at_most(problems, f"table2.{task}.min_queries", settings.get("min_queries"), f"table2.{task}.n_queries",
                 settings.get("n_queries"), "the task keeps at most n_queries, so the minimum always warns")
    distill = config.get("distill", {})
    data = distill.get("data", {})
    _at_most(problems, "distill.data.min_documents", data.get("min_documents"), "distill.data.max_documents",
             data.get("max_documents"), "the corpus keeps at most max_documents, so the minimum always warns")
    for key, known_key in (("structural_teacher", "models"), ("contextual_teacher", "variants")):
        teacher = distill.get(key, {})
        if "teacher" in teacher:
            known = [v["name"] if isinstance(v, dict) else v for v in teacher.get(known_key, [])]
            if teacher["teacher"] not in known:
                problems.append(f"distill.{key}.teacher: {teacher['teacher']!r} is not one of "
                                f"distill.{key}.{known_key} ({', '.join(map(str, known))})")
    problems += _nugget_analysis_problems(config)
    problems += table4_zoo_problems(config)
    problems += _subencoder_problems(config)
    problems += _comparison_problems(config)
    return problems


def _nugget_analysis_problems(config: dict) -> list[str]:
    problems: list[str] = []
    analysis = config.get("nugget_analysis")
    if not analysis:
        return problems
    folders = [str(r) for r in analysis["ratios"]]  # as multivec.rules.nugget_figures spells the folders
    for key in ("fig5", "fig6", "probability_gain"):
        ratio = analysis.get(key, {}).get("ratio")
        if ratio is not None and str(ratio) not in folders:
            problems.append(f"nugget_analysis.{key}.ratio: {ratio!r} is not one of nugget_analysis.ratios "
                            f"({', '.join(folders)}): the figure reads that model")
    gain = analysis.get("probability_gain", {})
    if "lengths" in gain and "documents" in gain and len(gain["lengths"]) != len(gain["documents"]):
        problems.append(f"nugget_analysis.probability_gain.documents: {len(gain['documents'])} entries, but "
                        f"nugget_analysis.probability_gain.lengths has {len(gain['lengths'])}; one count per length")
    if "fig7_length" in gain and gain["fig7_length"] not in gain.get("lengths", []):
        problems.append(f"nugget_analysis.probability_gain.fig7_length: {gain['fig7_length']} is not one of "
                        f"nugget_analysis.probability_gain.lengths ({gain.get('lengths')})")
    lm = config.get("nugget_lm")
    if lm:
        _at_most(problems, "nugget_lm.compress_window", lm.get("compress_window"), "nugget_lm.compress_tokens",
                 lm.get("compress_tokens"), "the history states are mean-pooled in windows of compress_window")
        for i, row in enumerate(lm.get("rows", [])):
            where = key_path(("nugget_lm", "rows", i, "ratio"))
            if row["ratio"] != 0:  # multivec.rules.nugget_lm lm_ae_model: ratio 0 is the folder ae_r0
                problems.append(ratio_text_problem(where, row["ratio"], "models/nugget_long/ae_r{}/seed<seed>"))
            need = {"nuggets": "above 0 (a nugget model)", "mean": "0 (the one-vector model)"}.get(row["history"])
            if need and (row["ratio"] > 0) != (row["history"] == "nuggets"):
                problems.append(f"{where}: {row['ratio']!r} does not suit nugget_lm.rows[{i}].history "
                                f"{row['history']!r}, which needs a ratio {need}")
    ablation = config.get("nugget_ablation")
    if ablation and "layers" in ablation:
        values, paths = merge(nugget_layers(config).get("nugget_analysis mt_r0.1", []))
        layer = ablation["layers"].get("3")
        if values and layer is not None and values.get("scorer_layer") != layer:
            problems.append(f'nugget_ablation.layers["3"]: {layer} must equal {paths["scorer_layer"]} '
                            f"({values.get('scorer_layer')}): Table 4's NUGGET (l = 3) row is the model "
                            "models/nugget_long/mt_r0.1, trained with that scorer layer")
    return [p for p in problems if p]


def table4_zoo_problems(config: dict) -> list[str]:
    """Table 4's rows against the zoo's models (the rules read each row from the zoo, multivec.rules.nugget_ablation):
    every row of ``nugget_ablation.rows`` builds, NUGGET (l = 3) is the zoo's MT r = 0.1 model of Table 2 and
    Fig. 4, and every row's settings are those of the zoo model its variant names (rows whose settings coincide
    read one folder). The settings are built as the rules build them (multivec.nugget.zoo.model_settings,
    multivec.nugget.configuration.ablation_settings)."""
    ablation = config.get("nugget_ablation") or {}
    if not ablation.get("rows"):
        return []
    from multivec.config.dataclass_config import ConfigError
    from multivec.nugget import zoo
    from multivec.nugget.configuration import ablation_config, ablation_settings

    nugget = config["nugget"]
    layers = {int(paper): ours for paper, ours in ablation.get("layers", {}).items()}
    try:  # the zoo's MT r = 0.1 model (Table 2, Fig. 4), every row's base
        mt_r01 = zoo.nugget_variant("0.1", nugget["scorer_layer"], nugget["selector"], nugget["feedback"])
        base = zoo.model_settings(config, "mt", mt_r01, config["seed"])
    except (ConfigError, ValueError) as err:
        return [f"nugget_ablation: Table 4 starts from the zoo's MT r = 0.1 model, which does not build: {err}"]
    problems, built = [], {}
    for i, name in enumerate(ablation["rows"]):
        try:
            ablation_config(name, base, layers=layers)
            settings = ablation_settings(name, base, layers=layers)
            built[name] = (i, settings, zoo.variant_of(settings))
        except (ConfigError, ValueError) as err:
            problems.append(f"{key_path(('nugget_ablation', 'rows', i))}: {name!r} does not build: {err}")
    if "nugget_l3" in built and built["nugget_l3"][2] != mt_r01:
        problems.append("nugget_ablation: NUGGET (l = 3) must be the MT r = 0.1 model of Table 2 and Fig. 4, but the "
                        "Table 4 defaults (MT, r = 0.1, learned selector, feedback, nugget_ablation.layers['3']) name "
                        f"{built['nugget_l3'][2]}, not {mt_r01}")
    for name, (i, settings, variant) in built.items():
        zoo_settings = zoo.model_settings(config, "mt", variant, config["seed"])
        if zoo_settings != settings:
            diff = sorted(k for k in set(zoo_settings) | set(settings) if zoo_settings.get(k) != settings.get(k))
            problems.append(f"{key_path(('nugget_ablation', 'rows', i))}: row {name!r}: its settings differ from the "
                            f"zoo model {variant} in {diff}")
    return problems


def _subencoder_problems(config: dict) -> list[str]:
    """The oracle segmenter reads PropSegment's human segmentations of the pairs' sentences; baseline encoders
    and backbones are looked up by one name space."""
    problems: list[str] = []
    subencoder = config.get("subencoder")
    if not subencoder:
        return problems
    segmenter, data = subencoder.get("segmenter", {}), subencoder.get("data", {})
    if segmenter.get("kind") == "oracle" and data.get("pairs_source") != "propsegment_test":
        problems.append("subencoder.segmenter.kind: 'oracle' reads PropSegment's human segmentations of the pairs' "
                        "sentences, so it needs subencoder.data.pairs_source: propsegment_test (got "
                        f"{data.get('pairs_source')!r})")
    names = {b["name"]: key_path(("subencoder", "model", "backbones", i))
             for i, b in enumerate(subencoder.get("model", {}).get("backbones", []))}
    for i, entry in enumerate(subencoder.get("evaluation", {}).get("baseline_encoders") or []):
        where = key_path(("subencoder", "evaluation", "baseline_encoders", i, "name"))
        if entry["name"] in names:
            problems.append(f"{where}: {entry['name']!r} is already the name of {names[entry['name']]}; backbones "
                            "and baseline encoders name the rows of one table")
        else:
            names[entry["name"]] = where
    return problems


def _comparison_problems(config: dict) -> list[str]:
    """One paired comparison given twice, or a row compared with itself, would count twice in Holm's correction."""
    problems = []
    for table, entries in (config.get("statistics", {}).get("comparisons") or {}).items():
        seen: dict[tuple, list[tuple[int, set | None]]] = {}  # (row, against) -> [(entry, metrics; None = all)]
        for i, entry in enumerate(entries):
            against = [entry["against"]] if isinstance(entry["against"], str) else entry["against"]
            metrics = set(entry["metrics"]) if entry.get("metrics") else None
            where = key_path(("statistics", "comparisons", table, i))
            for other in against:
                if other == entry["row"]:
                    problems.append(f"{where}.against: compares row {other!r} with itself")
                for j, earlier in seen.get((entry["row"], other), []):
                    if j != i and (metrics is None or earlier is None or metrics & earlier):
                        shared = "every metric" if metrics is None or earlier is None else \
                            ", ".join(sorted(metrics & earlier))
                        problems.append(f"{where}: {entry['row']!r} against {other!r} ({shared}) is already compared "
                                        f"at {key_path(('statistics', 'comparisons', table, j))}")
                seen.setdefault((entry["row"], other), []).append((i, metrics))
    return unique_problems(problems)
