"""The workflow's main targets, and a stop that names them when a run asks for a target no rule makes.

The Snakefile defines one target rule per paper (``nugget``, ``subencoder``, ``distill``: that work's tables and
figures at the configured scale), one per paper's claims (``nugget_claims``, ...: ``results/claims/<work>.csv``),
``claims`` (``results/claims.csv``) and ``all`` (their union, the default), and ``exports`` outside ``all`` (the
trained models and Table 2's rankings in other tools' formats, rules/interop.smk). ``MAIN_TARGETS`` lists them in
the order the message shows them; each rule's docstring says what it builds (``snakemake --list-rules`` prints
it too).

For a target no rule makes (a typo, a table named as the paper numbers it), Snakemake stops with a bare
``MissingRuleException: No rule to produce results/table3.csv``. The Snakefile calls ``check_requested_targets``
after its last rule, so that such a run stops before the DAG is built with the close matches and the main
targets instead. Snakemake parses the Snakefile before it hands the workflow its DAG settings (``DAGApi`` sets
``workflow.dag_settings`` right after the include), so the targets are read from the command line with
Snakemake's own argument parser (``snakemake.cli.get_argument_parser``), and only when this process is the
``snakemake`` command in its default mode: a job Snakemake spawns (``--target-jobs``, no positional targets),
a run through the Python API and a default storage provider (targets rewritten to storage queries) are left to
Snakemake. A target passes when it names a rule or when a rule's output pattern matches it, as Snakemake
decides (``Rule.is_producer``, on the path relative to the working directory): the check never refuses a run
that Snakemake would have planned. Nothing here builds or imports anything heavy (the workflow parses it at
every start).
"""

from __future__ import annotations

import contextlib
import difflib
import io
import os
import sys
import textwrap
from typing import Iterable, Sequence

WORKS = ("nugget", "subencoder", "distill")
WORK_TARGETS = WORKS  # one target rule per paper, named as the work
CLAIM_TARGETS = tuple(f"{work}_claims" for work in WORKS)
# The cross-work target: every representation against every task (rules/representations.smk).
MATRIX_TARGETS = ("representations",)
# Targets outside `all` (CI time): the exports of the trained models and rankings (rules/interop.smk).
EXPORT_TARGETS = ("exports",)
# The rules only those targets run: no job of `all`'s DAG (tests exclude them from the rules that must run).
EXPORT_RULES = ("export_model", "export_trec", "export_trec_propsegment", "export_beir", "export_beir_propsegment",
                "export_mteb", "export_manifest")
# What the message lists, in this order; every one is a rule of the Snakefile without wildcards.
MAIN_TARGETS = ("all", *WORK_TARGETS, *MATRIX_TARGETS, "claims", *CLAIM_TARGETS, *EXPORT_TARGETS)
# The target rules: no output of their own, so they are never a job of another target's DAG.
TARGET_RULES = ("all", *WORK_TARGETS, *MATRIX_TARGETS, *CLAIM_TARGETS, *EXPORT_TARGETS)
# What the message says of a main target whose rule has no docstring. `all` and `claims` have none on purpose:
# a docstring changes their line in `snakemake --list-rules`, which tests read as the list of the DAG's rules.
DESCRIPTIONS = {
    "all": "the default: every target below and results/rule_benchmarks.csv (runtime and memory per rule)",
    "claims": "every work's claims with verdicts, in the claims file's order",
}

_WIDTH = 116


class TargetError(Exception):
    """A requested target that no rule of the workflow makes."""


def _is_snakemake_command(argv0: str) -> bool:
    """Whether ``argv0`` is the ``snakemake`` command (its console script, or ``python -m snakemake``)."""
    path = os.path.normpath(argv0 or "")
    name = os.path.basename(path)
    return name == "snakemake" or (name == "__main__.py" and os.path.basename(os.path.dirname(path)) == "snakemake")


def command_line_targets(argv: Sequence[str]) -> list[str]:
    """The positional targets of a ``snakemake`` command line (``argv`` without the program), parsed as Snakemake
    parses them (options that take several values included; the targets after ``--`` too). [] when the line does
    not parse (Snakemake reports that itself)."""
    argv = list(argv)
    explicit: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, explicit = argv[:at], argv[at + 1:]
    try:
        from snakemake.cli import get_argument_parser

        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            args, _ = get_argument_parser().parse_known_args(argv)
    except (Exception, SystemExit):  # argparse exits on a line it cannot parse
        return explicit
    return [str(t) for t in (getattr(args, "targets", None) or [])] + explicit


def requested_targets(workflow, argv: Sequence[str] | None = None) -> list[str] | None:
    """The targets this run asks for; None when the check does not apply (see the module docstring)."""
    settings = getattr(workflow, "dag_settings", None)
    mode = getattr(getattr(workflow, "workflow_settings", None), "exec_mode", None)
    if mode is not None and getattr(mode, "name", str(mode)).upper() != "DEFAULT":
        return None
    storage = getattr(workflow, "storage_settings", None)
    if storage is not None and getattr(storage, "default_storage_provider", None):
        return None
    if settings is not None:
        return [str(t) for t in (settings.targets or ())]
    argv = list(sys.argv if argv is None else argv)
    if not argv or not _is_snakemake_command(argv[0]):
        return None
    return command_line_targets(argv[1:])


def _target_path(target: str) -> str:
    """The path Snakemake looks a file target up by: relative to the working directory, as given when absolute."""
    return target if os.path.isabs(target) or "://" in target else os.path.relpath(target)


def unknown_targets(workflow, targets: Iterable[str]) -> list[str]:
    """The targets that name no rule and match no rule's output pattern."""
    unknown = []
    for target in targets:
        if workflow.is_rule(target):
            continue
        path = _target_path(target)
        made = False
        for rule in workflow.rules:
            try:
                made = rule.is_producer(path)
            except Exception:  # a pattern Snakemake itself cannot match: leave the verdict to Snakemake
                made = True
            if made:
                break
        if not made:
            unknown.append(target)
    return unknown


def _concrete_files(rule) -> list[str]:
    return [str(f) for f in rule.input if "{" not in str(f)]


def known_files(workflow, main: Sequence[str] = MAIN_TARGETS) -> list[str]:
    """Every file the main targets name, then every output of a rule without wildcards, each once."""
    files: dict[str, None] = {}
    for name in main:
        if workflow.is_rule(name):
            files.update(dict.fromkeys(_concrete_files(workflow.get_rule(name))))
    for rule in workflow.rules:
        if not rule.has_wildcards():
            files.update(dict.fromkeys(str(f) for f in rule.output))
    return list(files)


def close_matches(target: str, candidates: Sequence[str], n: int = 4) -> list[str]:
    """Candidates whose file name contains the target's (``table3`` in ``results/nugget_table3_lm.csv``), same
    extension first, then the closest by spelling (difflib)."""
    stem, ext = os.path.splitext(os.path.basename(target))
    found: dict[str, None] = {}
    if len(stem) >= 3:
        holding = [c for c in candidates if stem.lower() in os.path.basename(c).lower()]
        found.update(dict.fromkeys(sorted(holding, key=lambda c: (os.path.splitext(c)[1] != ext, c))))
    found.update(dict.fromkeys(difflib.get_close_matches(target, list(candidates), n=n, cutoff=0.6)))
    return [c for c in found if c != target][:n]


def unknown_target_message(workflow, unknown: Sequence[str], main: Sequence[str] = MAIN_TARGETS) -> str:
    """What the run says instead of Snakemake's bare MissingRuleException: each unknown target with its close
    matches, the main targets with what each builds (its docstring and files), where to find the rest."""
    candidates = [*(m for m in main if workflow.is_rule(m)), *known_files(workflow, main)]
    lines = []
    for target in unknown:
        close = close_matches(target, candidates)
        hint = f" Did you mean {', '.join(close[:-1])} or {close[-1]}?" if len(close) > 1 else \
            f" Did you mean {close[0]}?" if close else ""
        lines.append(f"TargetError: no rule makes {target!r} (a target is a rule's name or a file a rule writes).{hint}")
    lines.append("The main targets (snakemake --cores all TARGET; add -n to list the jobs first):")
    for name in main:
        if not workflow.is_rule(name):
            continue
        rule = workflow.get_rule(name)
        lines.append(f"  {name:<18} {rule.docstring or DESCRIPTIONS.get(name, '')}".rstrip())
        if name != "all":
            files = " ".join(f for f in [*_concrete_files(rule), *map(str, rule.output)]
                             if f.endswith((".csv", ".html")))
            if files:
                lines.extend(textwrap.wrap(files, _WIDTH, initial_indent=" " * 21, subsequent_indent=" " * 21,
                                           break_on_hyphens=False))
    lines.append("Each file listed is a target too (most have a .md or .png beside them); `snakemake --list-target-rules` "
                 "lists every rule without wildcards; config/README.md the scales and settings.")
    return "\n".join(lines)


def check_requested_targets(workflow, main: Sequence[str] = MAIN_TARGETS, argv: Sequence[str] | None = None,
                            exit_on_error: bool = True) -> None:
    """Stop when the run asks for a target that no rule makes (see the module docstring): print
    ``unknown_target_message`` and exit with status 1 (``exit_on_error``), or raise ``TargetError`` with it."""
    targets = requested_targets(workflow, argv)
    if not targets:
        return
    unknown = unknown_targets(workflow, targets)
    if not unknown:
        return
    message = unknown_target_message(workflow, unknown, main)
    if not exit_on_error:
        raise TargetError(message)
    print(message, file=sys.stderr)
    raise SystemExit(1)
