"""Reading config files strictly: a syntax error, a duplicate key (YAML keeps the last one, so the other
setting would be dropped silently) or a top level that is not a mapping stops with ``file:line:column``.

The Snakefile calls ``check_config_files`` on the base config and every ``--configfile`` before ``configfile:``
loads them; the workflow profile (``profiles/default/config.yaml``) calls ``check_yaml_files`` on the command
line's ``--configfile`` arguments, because Snakemake loads those before any workflow code and its own messages
name neither the file nor the line.
"""

from __future__ import annotations

import os
import sys
from typing import Iterable

from multivec.config.dataclass_config import ConfigError
from multivec.io import yaml_safe_loader


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
