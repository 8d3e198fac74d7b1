"""Checks of the pipeline configuration that JSON Schema (``config/schema.yaml``) cannot express.

The Snakefile calls ``check_config(config)`` right after schema validation, so a bad
configuration stops the run before any job, with a message that names the key, its value
and the allowed range. What is checked, and why:

- ``table2.rows[i].name`` unique: rows are keyed by name (results, encodings); a duplicate
  would report one model's numbers under two names.
- ``table2.rows[i].ratio`` (NUGGET's r, Qin & Van Durme 2023, section 3: k = ceil(n * r)
  nuggets) must print as plain decimal digits that read back as the same number: the model
  folder is ``models/nugget/<objective>_r<ratio>/seed<seed>`` and the training rule parses the ratio
  back from it (``1e-05`` gives ``mt_r1e-05``, which no rule produces).
- ``corpora.{autoencoding,translation}.max_tokens`` <= ``nugget.max_source_tokens``:
  training documents are built to the former and cut to the latter.
- Encoder limits, from the encoder's own ``config.json`` (``max_position_embeddings``; the
  layer count ``encoder_layers`` or ``num_hidden_layers``): ``table2.max_tokens`` (null =
  the encoder's limit) and ``nugget.max_source_tokens`` at most the position limit of the
  encoders that read them; ``nugget.scorer_layer`` (layer l of section 3.1; 0 = the
  embeddings) at most the encoder's layer count. An encoder that is not on this machine
  (a hub id at paper scale, not cached) is not fetched: its checks are skipped with a note.

A YAML syntax error in a ``--configfile`` is found by ``check_yaml_files`` (file, line,
column), which the workflow profile runs before Snakemake reads the files itself.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Iterable

from multivec.resources import MINILM_NAMES, ResourceError, is_tiny_random, minilm_path, tiny_random_sizes

# Text a ratio must print as: the training rule's wildcard constraint (rules/nugget.smk).
RATIO_TEXT = re.compile(r"[0-9.]+")


class ConfigError(ValueError):
    """The configuration is invalid; the message names every offending key and its allowed range."""


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
        return None, f"encoder {ref!r} is not on this machine (hub id, not in the local cache)"
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
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    cached = try_to_load_from_cache(ref, "config.json")
    return Path(cached) if isinstance(cached, str) else None


def _row_problems(rows: list[dict]) -> list[str]:
    problems = []
    first_index: dict[str, int] = {}
    for i, row in enumerate(rows):
        name = row["name"]
        if name in first_index:
            problems.append(f"table2.rows[{i}].name: {name!r} is already the name of table2.rows[{first_index[name]}]; "
                            "row names must be unique")
        else:
            first_index[name] = i
        if row.get("kind") == "nugget" and "ratio" in row:
            ratio = row["ratio"]
            text = str(ratio)
            if not RATIO_TEXT.fullmatch(text) or float(text) != ratio:
                problems.append(
                    f"table2.rows[{i}].ratio: {ratio!r} prints as {text!r}, which does not name a model folder "
                    f"(models/nugget/{row.get('objective')}_r{text}/seed<seed>); allowed: 0 < ratio <= 1 written with plain "
                    "decimal digits (e.g. 0.00001, not 1e-05)")
    return problems


def _length_problems(config: dict) -> list[str]:
    problems = []
    source_limit = config["nugget"].get("max_source_tokens")
    if source_limit is None:
        return problems
    for corpus in ("autoencoding", "translation"):
        max_tokens = config["corpora"][corpus]["max_tokens"]
        if max_tokens > source_limit:
            problems.append(
                f"corpora.{corpus}.max_tokens: {max_tokens} is above nugget.max_source_tokens ({source_limit}), "
                f"so training would cut its documents; allowed: 1..{source_limit} (or raise nugget.max_source_tokens)")
    return problems


def _encoder_problems(config: dict, notes: list[str]) -> list[str]:
    problems = []
    nugget = config["nugget"]
    table2 = config["table2"]
    # Which keys each encoder's limits bound.
    readers = {config["base_encoder"]: ["base_encoder"]}
    readers.setdefault(nugget["encoder"], []).append("nugget.encoder")
    for ref, roles in readers.items():
        named = f"{' and '.join(roles)} {ref!r}"
        try:
            limits, where = encoder_limits(ref)
        except (ConfigError, ResourceError) as err:
            problems.append(f"{' / '.join(roles)}: {err}")
            continue
        if limits is None:
            notes.append(f"{where}: position and layer limits of {named} not checked")
            continue
        positions = limits["positions"]
        if positions:
            max_tokens = table2.get("max_tokens")
            if max_tokens is not None and max_tokens > positions:
                problems.append(
                    f"table2.max_tokens: {max_tokens} is above the position limit of {named} "
                    f"(max_position_embeddings = {positions} in {where}); allowed: 1..{positions}, "
                    "or null for the encoder's limit")
            source_limit = nugget.get("max_source_tokens")
            if "nugget.encoder" in roles and source_limit is not None and source_limit > positions:
                problems.append(
                    f"nugget.max_source_tokens: {source_limit} is above the position limit of {named} "
                    f"(max_position_embeddings = {positions} in {where}); allowed: 1..{positions}")
        layers = limits["layers"]
        if "nugget.encoder" in roles and layers is not None and nugget["scorer_layer"] > layers:
            problems.append(
                f"nugget.scorer_layer: {nugget['scorer_layer']} is above the layer count of {named} "
                f"({layers} layers in {where}); allowed: 0..{layers} (0 = the embedding output)")
    return problems


def _seed_problems(config: dict) -> list[str]:
    """Seeds must be written as integers: JSON Schema's ``integer`` accepts ``13.0``, which would name
    a model folder ``seed13.0`` and format into a different random stream."""
    problems = []
    if isinstance(config.get("seed"), float):
        problems.append(f"seed: {config['seed']!r} must be written as an integer (e.g. 13)")
    for seedset, seeds in (config.get("statistics", {}).get("seeds") or {}).items():
        for k, seed in enumerate(seeds):
            if isinstance(seed, float):
                problems.append(f"statistics.seeds.{seedset}[{k}]: {seed!r} must be written as an integer")
    return problems


def check_config(config: dict) -> list[str]:
    """Raise ``ConfigError`` naming every invalid key of a schema-valid config; return notes on skipped checks."""
    notes: list[str] = []
    problems = (_row_problems(config["table2"]["rows"]) + _length_problems(config) + _seed_problems(config)
                + _encoder_problems(config, notes))
    if problems:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))
    return notes


def yaml_problem(path: str | os.PathLike) -> str | None:
    """``'<file>, line L, column C: <problem>'`` if ``path`` is not valid YAML, else None."""
    import yaml

    try:
        with open(path, encoding="utf-8") as handle:
            yaml.safe_load(handle)
    except FileNotFoundError:
        return None  # Snakemake says so itself, naming the file
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        return f"{path}{where}: {err.problem or err.context}"
    except yaml.YAMLError as err:
        return f"{path}: {err}"
    return None


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
    """Stop when a ``--configfile`` of ``argv`` (default: this process's) is not valid YAML.

    Raises ``ConfigError`` naming file, line and column; with ``exit_on_error`` prints that
    message and exits with status 1 instead (how the workflow profile calls it, before
    Snakemake loads the files: Snakemake's own message for this names neither).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    problems = [p for p in map(yaml_problem, configfile_arguments(argv)) if p]
    if not problems:
        return
    message = "a --configfile is not valid YAML: " + "; ".join(problems)
    if exit_on_error:
        print(f"ConfigError: {message}", file=sys.stderr)
        raise SystemExit(1)
    raise ConfigError(message)
