"""Reading config files strictly: a syntax error, a duplicate key (YAML keeps the last one, so the other
setting would be dropped silently) or a top level that is not a mapping stops with ``file:line:column``.

The Snakefile calls ``check_config_files`` on the base config and every ``--configfile`` before ``configfile:``
loads them; the workflow profile (``profiles/default/config.yaml``) calls ``check_yaml_files`` on the command
line's ``--configfile`` arguments, because Snakemake loads those before any workflow code and its own messages
name neither the file nor the line (nor, for a file that does not exist, anything shorter than a traceback).

A config file is small: what the loader refuses before it builds anything (``file:line:column``) also bounds the
cost of every check after it, which walks the tree as YAML aliases expand it:

- aliases (``*name``) that repeat more than ``MAX_ALIAS_NODES`` nodes in all (a "billion laughs" file loads in
  milliseconds as shared objects, but expands to millions of nodes in every walk, Snakemake's merge included);
- an alias inside its own anchor (a recursive config: every walk of it has no end);
- nesting deeper than ``MAX_DEPTH`` collections, aliases expanded (libyaml's composer crashes the process at
  some 50,000 levels; every recursive walk stops with a ``RecursionError`` far earlier);
- a path that is not a regular file (a directory, a pipe that the check would drain before Snakemake reads it,
  a device).

``--configfile`` given twice is refused too (``configfile_flag_problem``): Snakemake's flag does not append, so it
applies only the last flag's files while each file named looks applied.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import Iterable

from multivec.config.dataclass_config import ConfigError
from multivec.io import yaml_safe_loader


# What a config file may ask of the loader. The project's config files repeat no node by alias and nest at most
# 14 collections (config/schema.yaml; a config file 7, claims.yaml 8); every walk costs the expanded tree.
MAX_ALIAS_NODES = 10_000
MAX_DEPTH = 64


def _bounded_events_problem(text: str):
    """A ``yaml.MarkedYAMLError`` for the first alias or collection of ``text`` past the loader's bounds (see the
    module's docstring), or None; one pass over libyaml's parse events (a few milliseconds per config file),
    before the composer builds any node: the bounds hold for a file that would crash or stall it."""
    import yaml

    stack: list[list] = []  # per open collection: [expanded nodes so far, anchor, height]
    sizes: dict[str, tuple[int, int]] = {}  # anchor -> (expanded nodes, height)
    repeated = 0
    try:
        for event in yaml.parse(text, Loader=yaml_safe_loader()):
            if isinstance(event, yaml.DocumentStartEvent):
                stack, sizes = [], {}
            elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                if len(stack) >= MAX_DEPTH:
                    return yaml.composer.ComposerError(
                        None, None, f"collections nested deeper than {MAX_DEPTH} levels; a config file needs a few "
                        "(every check of the tree walks it level by level)", event.start_mark)
                stack.append([1, event.anchor, 1])
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                count, anchor, height = stack.pop()
                if anchor is not None:
                    sizes[anchor] = (count, height)
                if stack:
                    stack[-1][0] += count
                    stack[-1][2] = max(stack[-1][2], height + 1)
            elif isinstance(event, yaml.ScalarEvent):
                if event.anchor is not None:
                    sizes[event.anchor] = (1, 0)
                if stack:
                    stack[-1][0] += 1
            elif isinstance(event, yaml.AliasEvent):
                anchor = event.anchor
                if any(entry[1] == anchor for entry in stack):
                    return yaml.composer.ComposerError(
                        None, None, f"the alias *{anchor} is inside its own anchor &{anchor}: the config would "
                        "contain itself, and every check of it would have no end", event.start_mark)
                if anchor not in sizes:
                    continue  # an undefined alias: the composer names it
                count, height = sizes[anchor]
                repeated += count
                if repeated > MAX_ALIAS_NODES:
                    return yaml.composer.ComposerError(
                        None, None, f"YAML aliases repeat more than {MAX_ALIAS_NODES:,} nodes by here (this *{anchor} "
                        f"alone repeats {count:,}): every check of the config walks each repeat, so the file would "
                        "cost without bound; write the values out, or repeat less", event.start_mark)
                if len(stack) + height > MAX_DEPTH:
                    return yaml.composer.ComposerError(
                        None, None, f"the alias *{anchor} nests collections deeper than {MAX_DEPTH} levels; a config "
                        "file needs a few (every check of the tree walks it level by level)", event.start_mark)
                if stack:
                    stack[-1][0] += count
                    stack[-1][2] = max(stack[-1][2], height + 1)
    except yaml.YAMLError:
        return None  # a syntax error: the loader reports it with its own mark
    return None


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
    error, a duplicate key or an alias or nesting past the loader's bounds (``MAX_ALIAS_NODES``, ``MAX_DEPTH``),
    and naming the file when its top level is not a mapping (empty, ``~``, a list) or it is not a regular file."""
    import yaml

    problem = not_a_file_problem(path)
    if problem:
        raise ConfigError(f"{path}: {problem}")
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        bounded = _bounded_events_problem(text)
        if bounded is not None:
            raise bounded
        data = yaml.load(text, Loader=_strict_loader())
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
    except OSError as err:
        raise ConfigError(f"{path}: cannot be read ({err.strerror or err})") from None
    if isinstance(data, dict):
        return data
    found = ("empty (or only null / ~)" if data is None else
             f"a list of {len(data)} item(s)" if isinstance(data, list) else f"a single {type(data).__name__} value")
    raise ConfigError(f"{path}: the file is {found}; a config file must be a mapping of config keys at its top "
                      "level (e.g. `seed: 13`)")


def not_a_file_problem(path: str | os.PathLike) -> str | None:
    """Why ``path``, which exists, is not a file a config can be read from (a directory, a pipe, a device, a
    socket), or None (also for a path that does not exist). Decided by ``os.stat``, which opens nothing: opening a
    pipe would wait for a writer, and reading one would drain it before Snakemake reads it."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory, not a config file"
    kind = ("a named pipe" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    return (f"{kind}, not a config file on disk: the config check and Snakemake each read a config file, and a pipe "
            "or device need not give the same text twice (a pipe gives it once); give a file")


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


_CONFIGFILE_FLAGS = ("--configfile", "--configfiles")


def configfile_flag_groups(argv: Iterable[str]) -> list[tuple[str, list[str]]]:
    """Each ``--configfile`` / ``--configfiles`` of a Snakemake command line with the files it takes, in order:
    ``(flag as written, files)``. Read as Snakemake 9's argparse reads it (``nargs="+"``): ``--configfile=a.yaml``
    takes that one file, ``--configfile a.yaml b.yaml`` every word up to the next option, and ``--`` ends the
    options (what follows is targets)."""
    groups: list[tuple[str, list[str]]] = []
    taking = False
    for arg in argv:
        if arg == "--":
            break
        if arg.startswith("-"):
            name, equals, value = arg.partition("=")
            taking = name in _CONFIGFILE_FLAGS and not equals
            if name in _CONFIGFILE_FLAGS:
                groups.append((arg, [value] if equals else []))
        elif taking:
            groups[-1][1].append(arg)
    return groups


def configfile_arguments(argv: Iterable[str]) -> list[str]:
    """The files Snakemake applies from ``--configfile`` / ``--configfiles`` on a command line: the last flag's
    (its argparse action stores, it does not append; ``configfile_flag_problem`` refuses the flag given twice)."""
    groups = configfile_flag_groups(argv)
    return groups[-1][1] if groups else []


def configfile_flag_problem(argv: Iterable[str]) -> str | None:
    """One line when ``--configfile`` (or ``--configfiles``) is given more than once: Snakemake applies only the
    last one's files and drops the others without a word, so a run would go on with another scale's settings."""
    groups = configfile_flag_groups(argv)
    if len(groups) < 2:
        return None
    given = " ".join(f"{flag} {' '.join(files)}".strip() if "=" not in flag else flag for flag, files in groups)
    every = [f for _, files in groups for f in files]
    dropped = list(dict.fromkeys(f for _, files in groups[:-1] for f in files if f not in groups[-1][1]))
    line = (f"--configfile is given {len(groups)} times ({given}): Snakemake applies only the last one's files "
            f"({', '.join(groups[-1][1]) or 'none'})")
    if dropped:
        line += f" and would drop {', '.join(dropped)} without a word"
    return line + f"; give every file after one --configfile, in the order they apply: --configfile {' '.join(every)}"


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
    return line + _overlays_sentence(argv)


def _overlays_sentence(argv: Iterable[str]) -> str:
    """`` The scale overlays: config/smoke.yaml, ...`` of the workflow's config folder, or ""."""
    folder = _config_folder(argv)
    if folder is None:
        return ""
    shown = os.path.relpath(folder) if not os.path.relpath(folder).startswith("..") else folder
    files = config_overlays(folder)
    overlays = [os.path.join(shown, n) for n in files if n != "config.yaml"]
    base = os.path.join(shown, "config.yaml")
    if not overlays:
        return ""
    return (f" The scale overlays: {', '.join(overlays)} ({base}, the demo, is always read first; "
            f"{os.path.join(shown, 'README.md')} says what each sets).")


def not_a_file_message(paths: Iterable[str | os.PathLike], argv: Iterable[str] = ()) -> str | None:
    """One line naming every ``--configfile`` of ``paths`` that is a directory, a pipe or a device (Snakemake's
    own answer to a directory is its full usage text and an ``IsADirectoryError``), with the workflow's config
    files; None when there is none."""
    named = [f"{p} is {problem}" for p in paths for problem in [not_a_file_problem(p)] if problem]
    if not named:
        return None
    return f"--configfile {'; '.join(named)}: give YAML files, one or more after one --configfile." + \
        _overlays_sentence(argv)


def check_yaml_files(argv: Iterable[str] | None = None, exit_on_error: bool = False,
                     missing: bool | None = None) -> None:
    """Stop when a ``--configfile`` of ``argv`` (default: this process's) is not a valid config file.

    Raises ``ConfigError`` naming each file (and line, column); with ``exit_on_error`` prints that
    message and exits with status 1 instead (how the workflow profile calls it, before Snakemake
    loads the files: Snakemake's own messages for these name neither file nor line). With ``missing``
    (default: ``exit_on_error``, the profile's call, right before Snakemake would load the files) a file that
    does not exist is named in one line with the workflow's scale overlays (``missing_configfiles_message``):
    Snakemake's own answer is a 28-line traceback of its ``FileNotFoundError``, raised before any workflow
    code runs, so with ``--workflow-profile none`` that traceback is what remains. First of all, ``--configfile``
    given twice stops (``configfile_flag_problem``: Snakemake would apply only the last one's files); a
    ``--configfile`` that is a directory, a pipe or a device is one line too (``not_a_file_message``).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        repeated = configfile_flag_problem(argv)
        if repeated:
            raise ConfigError(repeated)
        absent = missing_configfiles_message(configfile_arguments(argv), argv) if (
            exit_on_error if missing is None else missing) else None
        if absent:
            raise ConfigError(absent)
        not_files = not_a_file_message(configfile_arguments(argv), argv)
        if not_files:
            raise ConfigError(not_files)
        check_config_files(configfile_arguments(argv))
    except ConfigError as err:
        if exit_on_error:
            print(f"ConfigError: {err}", file=sys.stderr)
            raise SystemExit(1) from None
        raise
