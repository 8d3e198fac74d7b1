"""Start-up checks of the pipeline configuration: no setting dropped, changed or accepted silently.

The Snakefile runs two calls before any rule is defined, so a bad configuration stops the run
before any job, with every problem at once, each naming the config key path (``nugget_lm.train.lr``)
or the file and line:

1. ``check_config_files([config/config.yaml, *workflow.configfiles])``, before ``configfile:``
   loads the base config; and ``check_yaml_files()`` in the workflow profile
   (``profiles/default/config.yaml``), because Snakemake loads every ``--configfile`` before any
   workflow code and its own messages name neither the file nor the line. Each file is read with
   ``read_config_file`` (a safe loader), which rejects

   - a YAML syntax error (``file:line:column``);
   - a duplicate key in any mapping (``file:line:column``, the key and its first line): YAML keeps
     the last one, so the other setting would be dropped silently;
   - a file whose top level is not a mapping (empty, ``~``, a list, a scalar): the message names
     the file and says a mapping of config keys is expected.

   Without the workflow profile (``--workflow-profile none``, the Python API) a syntax error or a
   non-mapping ``--configfile`` still stops before any job, but with Snakemake's own message: it
   loads those files before the Snakefile runs.

2. ``check_config(config, schema)`` on the merged config (every file and ``--config key=value``):

   - **Schema, strictly** (``schema_problems``): ``config/schema.yaml`` (read with the same
     duplicate-rejecting loader) with every error listed, each as ``<key path>: <problem>``.
     Stricter than JSON Schema's own types: an ``integer`` key written as a float (``seed: 13.0``,
     which JSON Schema accepts but which formats as ``13.0`` into model folders and seeds) is
     refused anywhere in the config, and a ``number`` must be finite. Every object in the schema
     lists its keys with ``additionalProperties: false`` (tests/test_config_validation.py checks
     this, and that the override blocks ``nugget_analysis.model``, ``.model_by_objective.*``,
     ``nugget_analysis.train`` and ``nugget_lm.train`` list exactly the fields of ``NuggetConfig``
     and ``TrainConfig`` that a config may set). Arrays used as sets have ``uniqueItems``.
   - **NaN and infinity** (``nonfinite_problems``): YAML ``.nan``/``.inf`` anywhere, with its path
     (``minimum``/``maximum`` comparisons are false for NaN, so JSON Schema alone would pass it).
   - **Named entries unique** (``duplicate_name_problems``): every list of mappings with a ``name``
     (``table2.rows``, ``nugget_lm.rows``, ``subencoder.model.backbones``,
     ``distill.contextual_teacher.variants``, ...) is looked up by name, so two entries with one
     name would collapse into one; likewise one comparison twice in ``statistics.comparisons``.
   - **Folder-safe ratios**: ``table2.rows[i].ratio``, ``nugget_analysis.ratios`` (NUGGET's r,
     Qin & Van Durme 2023, section 3: k = ceil(n * r)) must print as plain decimal digits that read
     back as the same number: they name model folders (``models/nugget/<objective>_r<ratio>/...``)
     that the training rules parse back (``1e-05`` gives ``mt_r1e-05``, which no rule produces).
   - **Keys consistent with each other** (``consistency_problems``; each message names both paths):
     ``warmup_steps`` <= ``max_steps`` in every training block as the rules merge it (``train``;
     ``train`` + ``nugget_analysis.train``; ``train`` + ``nugget_lm.train``; ``distill.train``;
     ``subencoder.train``); corpus ``dev_size`` < ``max_documents`` and ``min_documents`` <=
     ``max_documents``; ``table2.{pi,rr}.min_queries`` <= ``n_queries``;
     ``distill.data.min_documents`` <= ``max_documents``; ``corpora.*.max_tokens`` <=
     ``nugget.max_source_tokens`` (training documents are built to the former, cut to the latter);
     ``nugget_analysis.{fig5,fig6,probability_gain}.ratio`` one of ``nugget_analysis.ratios`` as
     the folders spell them; ``nugget_lm.rows[i].ratio`` folder-safe, a ``nuggets`` history on
     r > 0 and a ``mean`` one on r = 0 (the AE model it starts from);
     ``probability_gain.documents`` one per ``lengths`` entry,
     ``fig7_length`` one of them; ``nugget_lm.compress_tokens`` >= ``compress_window``;
     ``nugget_ablation.layers["3"]`` = the scorer layer of the model it reuses; the teachers one of
     ``distill.structural_teacher.models`` / ``contextual_teacher.variants``; and every NUGGET
     model config the rules build (Table 2's rows, TSDAE, each ``nugget_analysis`` objective and
     ratio) is built with ``NuggetConfig`` itself, its error reported at the config key that set
     the field (e.g. ``nugget_analysis.model_by_objective.ae.decoder_init``).
   - **Encoder limits** (``encoder_problems``), from the encoder's own ``config.json``
     (``max_position_embeddings``; the layer count ``encoder_layers`` or ``num_hidden_layers``):
     ``table2.max_tokens`` (null = the encoder's limit) and each NUGGET model's
     ``max_source_tokens`` at most the position limit of the encoder that reads them; its
     ``scorer_layer`` (layer l of section 3.1; 0 = the embeddings), ``frozen_layers`` and
     ``nugget_ablation.layers`` at most the encoder's layer count. An encoder that is not on this
     machine (a hub id at paper scale, not cached) is not fetched: its checks are skipped with a note.

A few cross-key checks also stand in the rules (``rules/nugget_figures.smk``, ``nugget_gain.smk``,
``distill_teachers_common.smk``, ``nugget_ablation_common.smk``); the checks here run first and
report every problem at once.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Any, Iterable

from multivec.dataclass_config import ConfigError
from multivec.io import yaml_safe_loader
from multivec.resources import (MINILM_NAMES, ResourceError, is_tiny_random, minilm_path, mirrored_model,
                                tiny_random_sizes)

# Text a ratio must print as: the training rule's wildcard constraint (rules/nugget.smk).
RATIO_TEXT = re.compile(r"[0-9.]+")
# The schema next to the config in a checkout (src/multivec/config_checks.py -> config/schema.yaml).
SCHEMA = Path(__file__).resolve().parents[2] / "config" / "schema.yaml"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# -- reading config files ---------------------------------------------------------------------------------

def _strict_loader():
    """A ``yaml.SafeLoader`` whose mappings refuse a key given twice (YAML would keep the last one); libyaml's
    parser where PyYAML has it (``multivec.io.yaml_safe_loader``)."""
    import yaml

    class StrictLoader(yaml_safe_loader()):
        def construct_mapping(self, node, deep=False):
            if isinstance(node, yaml.MappingNode):
                first_line: dict = {}
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *anchor` merges may override
                        continue
                    key = self.construct_object(key_node, deep=True)
                    try:
                        seen = key in first_line
                    except TypeError:  # an unhashable key: SafeConstructor reports it
                        continue
                    if seen:
                        raise yaml.constructor.ConstructorError(
                            None, None,
                            f"duplicate key {key!r} (first given at line {first_line[key]}); YAML keeps only the "
                            "last value, so the other would be dropped silently", key_node.start_mark)
                    first_line[key] = key_node.start_mark.line + 1
            return super().construct_mapping(node, deep)

    return StrictLoader


def read_config_file(path: str | os.PathLike) -> dict:
    """The mapping in a YAML (or JSON) config file; ``ConfigError`` naming ``file:line:column`` on a syntax
    error or a duplicate key, and naming the file when its top level is not a mapping (empty, ``~``, a list)."""
    import yaml

    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.load(handle, Loader=_strict_loader())
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        problem = err.problem or err.context
        if err.context and err.problem and err.context_mark is not None:
            problem = f"{err.context} (line {err.context_mark.line + 1}): {err.problem}"
        raise ConfigError(f"{path}{where}: {problem}") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from None
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not UTF-8 text ({err})") from None
    if isinstance(data, dict):
        return data
    found = ("empty (or only null / ~)" if data is None else
             f"a list of {len(data)} item(s)" if isinstance(data, list) else f"a single {type(data).__name__} value")
    raise ConfigError(f"{path}: the file is {found}; a config file must be a mapping of config keys at its top "
                      "level (e.g. `seed: 13`)")


def configfile_problem(path: str | os.PathLike) -> str | None:
    """Why ``path`` is not a usable config file (see ``read_config_file``), or None; a missing file is None
    (Snakemake names it itself)."""
    if not os.path.exists(path):
        return None
    try:
        read_config_file(path)
    except ConfigError as err:
        return str(err)
    return None


def check_config_files(paths: Iterable[str | os.PathLike]) -> None:
    """Raise ``ConfigError`` listing the problem of every config file in ``paths`` that has one."""
    problems = list(dict.fromkeys(p for p in map(configfile_problem, paths) if p))
    if problems:
        raise ConfigError("invalid config file:\n  " + "\n  ".join(problems))


def configfile_arguments(argv: Iterable[str]) -> list[str]:
    """The files given to ``--configfile`` / ``--configfiles`` on a Snakemake command line."""
    files, taking = [], False
    for arg in argv:
        if arg.startswith("-"):
            name, _, value = arg.partition("=")
            taking = name in ("--configfile", "--configfiles") and not value
            if value and name in ("--configfile", "--configfiles"):
                files.append(value)
        elif taking:
            files.append(arg)
    return files


def check_yaml_files(argv: Iterable[str] | None = None, exit_on_error: bool = False) -> None:
    """Stop when a ``--configfile`` of ``argv`` (default: this process's) is not a valid config file.

    Raises ``ConfigError`` naming each file (and line, column); with ``exit_on_error`` prints that
    message and exits with status 1 instead (how the workflow profile calls it, before Snakemake
    loads the files: Snakemake's own messages for these name neither file nor line).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        check_config_files(configfile_arguments(argv))
    except ConfigError as err:
        if exit_on_error:
            print(f"ConfigError: {err}", file=sys.stderr)
            raise SystemExit(1) from None
        raise


# -- key paths --------------------------------------------------------------------------------------------

def key_path(parts: Iterable[Any]) -> str:
    """``nugget_lm.train.lr``, ``table2.rows[2].name``, ``nugget_ablation.layers["3"]`` from path parts."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _IDENTIFIER.fullmatch(str(part)):
            text += ("." if text else "") + str(part)
        else:
            text += f"[{json.dumps(str(part))}]"
    return text or "(top level)"


# -- schema, strictly -------------------------------------------------------------------------------------

def load_schema(schema: str | os.PathLike | dict = SCHEMA) -> dict:
    """The schema as a dict (a path is read with the duplicate-rejecting loader)."""
    return schema if isinstance(schema, dict) else read_config_file(schema)


def strict_validator(schema: dict):
    """A Draft 2020-12 validator whose ``integer`` is an int written as one (not ``13.0``) and whose
    ``number`` is finite."""
    from jsonschema import Draft202012Validator, validators

    checker = Draft202012Validator.TYPE_CHECKER.redefine_many({
        "integer": lambda _, value: isinstance(value, int) and not isinstance(value, bool),
        "number": lambda _, value: (isinstance(value, (int, float)) and not isinstance(value, bool)
                                    and math.isfinite(value)),
    })
    return validators.extend(Draft202012Validator, type_checker=checker)(schema)


def _schema_message(error) -> str | None:
    value = error.instance
    if isinstance(value, float) and not math.isfinite(value):
        return None  # nonfinite_problems names it
    if error.validator == "type":
        types = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        if isinstance(value, float) and value.is_integer() and "integer" in types:
            return (f"{value!r} must be written as an integer ({int(value)}): a float formats as {str(value)!r} "
                    "into model folders and seeds")
        if isinstance(value, str) and {"number", "integer"} & set(types):
            try:
                float(value)
            except ValueError:
                pass
            else:
                return (f"{value!r} is text, not a number (YAML 1.1 reads an exponent without a decimal point "
                        "as text: write e.g. 1.0e-4)")
    message = error.message
    description = error.schema.get("description") if isinstance(error.schema, dict) else None
    if description and error.validator in ("not", "const", "enum", "pattern"):
        message += f" ({description})"
    return message


def schema_problems(config: dict, schema: str | os.PathLike | dict = SCHEMA) -> list[str]:
    """Every schema error of ``config`` as ``<key path>: <problem>`` (strict integer and finite number types)."""
    validator = strict_validator(load_schema(schema))
    problems = []
    for error in validator.iter_errors(config):
        message = _schema_message(error)
        if message is not None:
            problems.append(f"{key_path(error.absolute_path)}: {message}")
    return list(dict.fromkeys(problems))


def nonfinite_problems(value: Any, parts: tuple = ()) -> list[str]:
    """``<key path>: nan ...`` for every NaN or infinite number (YAML ``.nan``, ``.inf``) anywhere in ``value``."""
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in nonfinite_problems(item, (*parts, key))]
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in nonfinite_problems(item, (*parts, i))]
    if isinstance(value, float) and not math.isfinite(value):
        return [f"{key_path(parts)}: {value!r} is not a finite number (YAML .nan / .inf); allowed: a finite value "
                "in the key's range"]
    return []


def duplicate_name_problems(value: Any, parts: tuple = ()) -> list[str]:
    """Every list of mappings with a ``name`` key, anywhere in ``value``, must name its entries uniquely."""
    problems = []
    if isinstance(value, dict):
        for key, item in value.items():
            problems += duplicate_name_problems(item, (*parts, key))
    elif isinstance(value, list):
        if value and all(isinstance(item, dict) and "name" in item for item in value):
            first: dict = {}
            for i, item in enumerate(value):
                name = item["name"]
                if not isinstance(name, (str, int, float, bool, type(None))):
                    continue  # a schema error
                if name in first:
                    problems.append(
                        f"{key_path((*parts, i, 'name'))}: {name!r} is already the name of "
                        f"{key_path((*parts, first[name]))}; names in {key_path(parts)} must be unique (entries are "
                        "looked up by name, so one of the two would be dropped silently)")
                else:
                    first[name] = i
        for i, item in enumerate(value):
            problems += duplicate_name_problems(item, (*parts, i))
    return problems


# -- encoders ---------------------------------------------------------------------------------------------

def encoder_limits(ref: str) -> tuple[dict | None, str]:
    """``({"positions": int | None, "layers": int | None}, where)`` for an encoder reference.

    ``where`` names the config the limits come from; the dict is None (and ``where`` says
    why) when the encoder's config is not available on this machine.
    """
    if is_tiny_random(ref):
        sizes = tiny_random_sizes(ref)
        layers = sizes.get("encoder_layers", sizes.get("num_hidden_layers"))
        return {"positions": sizes["max_position_embeddings"], "layers": layers}, f"{ref} (multivec.resources)"
    config_path = _local_config_json(ref)
    if config_path is None:
        return None, (f"encoder {ref!r} is not on this machine (hub id, not in the data mirror's models/ nor in "
                      "the local hub cache)")
    try:
        hf_config = json.loads(Path(config_path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ConfigError(f"cannot read the encoder config {config_path} of {ref!r}: {err}") from None
    layers = hf_config.get("encoder_layers", hf_config.get("num_hidden_layers"))
    return {"positions": hf_config.get("max_position_embeddings"), "layers": layers}, str(config_path)


def _local_config_json(ref: str) -> Path | None:
    if ref in MINILM_NAMES:
        return Path(minilm_path()) / "config.json"
    folder = Path(ref).expanduser()
    if folder.is_dir():
        if not (folder / "config.json").is_file():
            raise ConfigError(f"model folder {ref!r} has no config.json")
        return folder / "config.json"
    if ref.startswith((".", "/", "~")):
        raise ConfigError(f"model folder {ref!r} does not exist")
    mirrored = mirrored_model(ref)  # <mirror>/models/<hub id>/, where resolve_model loads it from
    if mirrored is not None:
        return Path(mirrored) / "config.json"
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    cached = try_to_load_from_cache(ref, "config.json")
    return Path(cached) if isinstance(cached, str) else None


# -- merged settings, as the rules build them -------------------------------------------------------------

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
    """Every TrainConfig the rules build, by its block (rules/common.smk train_config and long_train_config,
    rules/nugget_lm.smk, distill_common.smk, subencoder_common.smk), as the blocks they merge."""
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


# The fields rules/common.smk's tsdae_model_config sets on top of a NUGGET model's config.
TSDAE_FIELDS = {"ratio": 1.0, "bottleneck": "mean", "residual": False, "feedback": False, "frozen_layers": -1}


def nugget_layers(config: dict) -> dict[str, list[Fields]]:
    """Every NuggetConfig the rules build, by what it is for, as the blocks they merge: Table 2's NUGGET
    and TSDAE rows (rules/common.smk nugget_model_config, tsdae_model_config) and the longer-trained
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


def _unique(problems: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(problems))


# -- keys consistent with each other ----------------------------------------------------------------------

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
    problems += _comparison_problems(config)
    return problems


def _nugget_analysis_problems(config: dict) -> list[str]:
    problems: list[str] = []
    analysis = config.get("nugget_analysis")
    if not analysis:
        return problems
    folders = [str(r) for r in analysis["ratios"]]  # as rules/common.smk's LONG_RATIOS spells the folders
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
            if row["ratio"] != 0:  # rules/nugget_lm_common.smk lm_ae_model: ratio 0 is the folder ae_r0
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
    return _unique(problems)


# -- encoder limits ---------------------------------------------------------------------------------------

def encoder_problems(config: dict, notes: list[str]) -> list[str]:
    """Lengths and layers within the limits of the encoders that read them (see the module docstring)."""
    problems: list[str] = []
    limits_of: dict[str, tuple[dict | None, str] | ConfigError | ResourceError] = {}

    def limits(ref: str, ref_path: str) -> tuple[dict, str] | None:
        if ref not in limits_of:
            try:
                limits_of[ref] = encoder_limits(ref)
            except (ConfigError, ResourceError) as err:
                limits_of[ref] = err
            else:
                if limits_of[ref][0] is None:
                    notes.append(f"{limits_of[ref][1]}: position and layer limits of {ref_path} {ref!r} not checked")
        found = limits_of[ref]
        if isinstance(found, Exception):
            problems.append(f"{ref_path}: {found}")
            return None
        return found if found[0] is not None else None

    table2_max = config["table2"].get("max_tokens")
    for ref_path in ("base_encoder", "nugget.encoder"):
        ref = config["base_encoder"] if ref_path == "base_encoder" else config["nugget"]["encoder"]
        found = limits(ref, ref_path)
        if found and found[0]["positions"] and table2_max is not None and table2_max > found[0]["positions"]:
            positions = found[0]["positions"]
            problems.append(f"table2.max_tokens: {table2_max} is above the position limit of {ref_path} {ref!r} "
                            f"(max_position_embeddings = {positions} in {found[1]}); allowed: 1..{positions}, "
                            "or null for the encoder's limit")
    models = nugget_layers(config)
    for what, layers in models.items():
        values, paths = merge(layers)
        found = limits(values["encoder"], paths["encoder"])
        if not found:
            continue
        (positions, layer_count), where = (found[0]["positions"], found[0]["layers"]), found[1]
        named = f"{paths['encoder']} {values['encoder']!r}"
        source = values.get("max_source_tokens")
        if positions and source is not None and source > positions:
            problems.append(f"{paths['max_source_tokens']}: {source} is above the position limit of {named} "
                            f"(max_position_embeddings = {positions} in {where}); allowed: 1..{positions}")
        if layer_count is None:
            continue
        for key in ("scorer_layer", "frozen_layers"):
            value = values.get(key)
            if isinstance(value, int) and value > layer_count:
                problems.append(f"{paths[key]}: {value} is above the layer count of {named} ({layer_count} layers in "
                                f"{where}); allowed: 0..{layer_count} (0 = the embedding output)")
        copied = values.get("decoder_copy_layers") or []
        if any(isinstance(i, int) and i >= layer_count for i in copied):
            problems.append(f"{paths['decoder_copy_layers']}: {copied} names a layer beyond the {layer_count} "
                            f"layers of {named} (0-based, in {where}); allowed: 0..{layer_count - 1}")
        if what == "nugget_analysis mt_r0.1":
            for paper, ours in (config.get("nugget_ablation", {}).get("layers") or {}).items():
                if isinstance(ours, int) and ours > layer_count:
                    problems.append(f'nugget_ablation.layers["{paper}"]: {ours} is above the layer count of {named} '
                                    f"({layer_count} layers in {where}); allowed: 0..{layer_count}")
    return _unique(problems)


# -- all of it --------------------------------------------------------------------------------------------

def check_config(config: dict, schema: str | os.PathLike | dict = SCHEMA) -> list[str]:
    """Raise ``ConfigError`` naming every invalid key path of ``config``; return notes on skipped checks.

    Duplicate names always; the schema (strictly) and NaN/infinity; the checks after those assume the
    schema's shape, so they run only when these pass.
    """
    problems = schema_problems(config, schema) + nonfinite_problems(config)
    notes: list[str] = []
    if not problems:
        problems = (ratio_problems(config) + consistency_problems(config) + nugget_config_problems(config)
                    + encoder_problems(config, notes))
    problems = _unique(problems + duplicate_name_problems(config))
    if problems:
        raise ConfigError(f"invalid configuration ({len(problems)} problem{'s' if len(problems) > 1 else ''}):\n  "
                          + "\n  ".join(problems))
    return _unique(notes)
