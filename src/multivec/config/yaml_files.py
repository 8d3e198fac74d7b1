"""Reading config files strictly: a syntax error, a duplicate key (YAML keeps the last one, so the other
setting would be dropped silently) or a top level that is not a mapping stops with ``file:line:column``.

The Snakefile calls ``check_config_files`` on the base config and every ``--configfile`` before ``configfile:``
loads them; the workflow profile (``profiles/default/config.yaml``) calls ``check_yaml_files`` on the command
line's ``--configfile`` arguments, because Snakemake loads those before any workflow code and its own messages
name neither the file nor the line (nor, for a file that does not exist, anything shorter than a traceback).
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


def _config_folder(argv: Iterable[str]) -> str | None:
    """The workflow's config/ folder: beside the ``--snakefile`` / ``-s`` of ``argv``, else in the current
    directory (where Snakemake finds ./Snakefile); None when there is none."""
    argv = list(argv)
    snakefile = None
    for i, arg in enumerate(argv):
        name, _, value = arg.partition("=")
        if name in ("--snakefile", "-s"):
            snakefile = value or (argv[i + 1] if i + 1 < len(argv) else None)
    folders = [os.path.join(os.path.dirname(os.path.abspath(snakefile)), "config")] if snakefile else []
    folders.append("config")
    return next((f for f in folders if os.path.isdir(f)), None)


def config_overlays(folder: str | os.PathLike) -> list[str]:
    """The config files in ``folder``: every ``*.yaml`` whose top-level keys are all config keys (properties of
    the folder's ``schema.yaml``), so neither the schema nor the claims file; the base ``config.yaml`` too."""
    import yaml

    names = sorted(n for n in os.listdir(folder) if n.endswith((".yaml", ".yml")))
    try:
        with open(os.path.join(folder, "schema.yaml"), encoding="utf-8") as handle:
            keys = set((yaml.safe_load(handle) or {}).get("properties", {}))
    except (OSError, yaml.YAMLError, AttributeError):
        keys = None
    found = []
    for name in names:
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                data = yaml.safe_load(handle)
        except (OSError, yaml.YAMLError, UnicodeDecodeError):
            continue
        if isinstance(data, dict) and data and (keys is None or set(data) <= keys):
            found.append(name)
    return found


def missing_configfiles_message(paths: Iterable[str | os.PathLike], argv: Iterable[str] = ()) -> str | None:
    """One line naming every ``--configfile`` of ``paths`` that does not exist and the workflow's config files
    (instead of the 28-line traceback of Snakemake's ``FileNotFoundError``); None when all exist."""
    missing = [str(p) for p in paths if not os.path.exists(p)]
    if not missing:
        return None
    named = ", ".join(missing)
    line = f"--configfile {named}: no such file (relative paths are read from {os.getcwd()})."
    words = [p for p in missing if not p.endswith((".yaml", ".yml", ".json"))]
    if words:  # `--configfile config/smoke.yaml nugget`: argparse takes every word up to the next option
        line += (f" Snakemake reads every word after --configfile as a config file up to the next option, so "
                 f"{', '.join(words)} was read as one: put targets before --configfile.")
    folder = _config_folder(argv)
    if folder is None:
        return line
    shown = os.path.relpath(folder) if not os.path.relpath(folder).startswith("..") else folder
    files = config_overlays(folder)
    overlays = [os.path.join(shown, n) for n in files if n != "config.yaml"]
    base = os.path.join(shown, "config.yaml")
    if overlays:
        line += (f" The scale overlays: {', '.join(overlays)} ({base}, the demo, is always read first; "
                 f"{os.path.join(shown, 'README.md')} says what each sets).")
    return line


def check_yaml_files(argv: Iterable[str] | None = None, exit_on_error: bool = False,
                     missing: bool | None = None) -> None:
    """Stop when a ``--configfile`` of ``argv`` (default: this process's) is not a valid config file.

    Raises ``ConfigError`` naming each file (and line, column); with ``exit_on_error`` prints that
    message and exits with status 1 instead (how the workflow profile calls it, before Snakemake
    loads the files: Snakemake's own messages for these name neither file nor line). With ``missing``
    (default: ``exit_on_error``, the profile's call, right before Snakemake would load the files) a file that
    does not exist is named in one line with the workflow's scale overlays (``missing_configfiles_message``):
    Snakemake's own answer is a 28-line traceback of its ``FileNotFoundError``, raised before any workflow
    code runs, so with ``--workflow-profile none`` that traceback is what remains.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        absent = missing_configfiles_message(configfile_arguments(argv), argv) if (
            exit_on_error if missing is None else missing) else None
        if absent:
            raise ConfigError(absent)
        check_config_files(configfile_arguments(argv))
    except ConfigError as err:
        if exit_on_error:
            print(f"ConfigError: {err}", file=sys.stderr)
            raise SystemExit(1) from None
        raise
