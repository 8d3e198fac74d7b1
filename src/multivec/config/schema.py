"""The configuration against ``config/schema.yaml``, strictly, and the walks a JSON schema cannot express.

- ``schema_problems``: every schema error as ``<key path>: <problem>``; an ``integer`` written as a float
  (``seed: 13.0``) is refused, a ``number`` must be finite;
- ``nonfinite_problems``: YAML ``.nan`` / ``.inf`` anywhere (``minimum``/``maximum`` are false for NaN);
- ``duplicate_name_problems``: every list of mappings with a ``name`` names its entries uniquely (they are
  looked up by name, so one of two would be dropped silently);
- ``key_path``: the one spelling of a config key path in every message (``table2.rows[2].name``).

Every name that becomes a path component (Table 2's rows, the SubEncoder's backbones and baseline encoders, the
distillation teachers' models and variants and the teacher each names) is ``$defs/plain_name`` in the schema: one
rule, so ``..``, ``a/b``, ``-x`` or a name with a space or a newline stops at its key path
(``table2.rows[0].name: '..' is not allowed: a plain name, ...``) instead of planning ``results/table2/../pi.json``.
The other names of the config are enums (``nugget_lm.rows[i].name``, ``nugget_ablation.rows``) or integers (seeds).
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any, Iterable

from multivec.config.yaml_files import read_config_file

# The schema next to the config in a checkout (src/multivec/config/schema.py -> config/schema.yaml).
SCHEMA = Path(__file__).resolve().parents[3] / "config" / "schema.yaml"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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


def unique_problems(problems: Iterable[str]) -> list[str]:
    """``problems`` in order, each once."""
    return list(dict.fromkeys(problems))


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
    if description and error.validator == "pattern":  # the description says what the regular expression allows
        return f"{value!r} is not allowed: {description}"
    if description and error.validator == "maxLength" and isinstance(value, str):
        return f"{value[:20]!r}... has {len(value)} characters, more than {error.validator_value}: {description}"
    if description and error.validator in ("not", "const", "enum"):
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
