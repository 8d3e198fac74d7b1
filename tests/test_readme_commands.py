"""Every snakemake command in the code blocks of the README and the docs (docs/*.md, config/README.md)
runs as printed (dry run), and CI runs the README's test command verbatim."""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
VENV_BIN = Path(sys.executable).parent
# What a fresh clone holds that a dry run reads (tests/test_workflow.py copies the same).
ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# `snakemake` as a word of its own (a program name, possibly after a path): only such a line is parsed as a
# command, so a code block's other lines (YAML with an apostrophe, say) are never handed to shlex
NAMES_SNAKEMAKE = re.compile(r"(?:^|[\s/])snakemake(?:\s|$)")


def code_block_lines(text):
    """Lines of the README's fenced code blocks, without comments."""
    lines, inside = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            inside = not inside
            continue
        if inside and line.strip() and not line.lstrip().startswith("#"):
            lines.append(line.split("  #")[0].strip())
    return lines


def _is_snakemake(part):
    words = shlex.split(part)
    return Path(next((w for w in words if not ENV_ASSIGNMENT.match(w)), "")).name == "snakemake"


def snakemake_commands(text):
    """Each `[VAR=value ...] [.venv/bin/]snakemake ...` command of the code blocks, as printed
    (one part of an `a && b` line)."""
    return [part.strip() for line in code_block_lines(text) for part in line.split("&&")
            if NAMES_SNAKEMAKE.search(part) and _is_snakemake(part)]


def setup_lines(text, command):
    """The `.venv/bin/python ...` lines that precede ``command`` in its own code block (what a reader runs
    first, e.g. writing a site profile or the rehearsal's fixture mirror), background (`&`) lines left out."""
    for block in re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.M | re.S):
        lines = code_block_lines("```\n" + block + "```")
        for at, line in enumerate(lines):
            if command in [part.strip() for part in line.split("&&")]:
                return [previous for previous in lines[:at]
                        if previous.startswith(".venv/bin/python ") and not previous.endswith("&")]
    return []


def readme_test_commands(text):
    """The README's pytest commands: the fast one (install + every test but e2e) and the end-to-end one."""
    lines = [line for line in code_block_lines(text) if "pytest" in line]
    assert len(lines) == 2, lines
    return lines


README_COMMANDS = snakemake_commands(README.read_text())
DOCS = [README, REPO / "config" / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# (document, command) for every snakemake command a reader can copy, README first; a command printed again
# (with the same setup lines) is dry-run once, where it first appears
DOC_COMMANDS = []
for _doc in DOCS:
    for _command in snakemake_commands(_doc.read_text()) if _doc.exists() else []:
        if not any(c == _command and setup_lines(d.read_text(), c) == setup_lines(_doc.read_text(), _command)
                   for d, c in DOC_COMMANDS):
            DOC_COMMANDS.append((_doc, _command))
ALL_COMMANDS = [command for _, command in DOC_COMMANDS]


def test_readme_has_the_commands_we_expect():
    assert len(README_COMMANDS) >= 2, README_COMMANDS
    assert any(c.startswith("MULTIVEC_DATA_MIRROR=") for c in README_COMMANDS)
    # the cluster run and the claims join are printed in the docs, if not in the README
    assert any("config/paper.yaml" in c and "profiles/slurm" in c for c in ALL_COMMANDS)
    # joining the committed work files must not hang on mtimes: a working tree (or a copy) where
    # results/claims.csv is newer than results/claims/*.csv would otherwise plan nothing
    joins = [c for c in ALL_COMMANDS if "--allowed-rules claims" in c]
    assert joins
    for command in joins:
        words = shlex.split(command)
        assert "--forcerun" in words and words[words.index("--forcerun") + 1] == "claims", command


def test_ci_runs_the_readme_test_commands_verbatim():
    fast, end_to_end = readme_test_commands(README.read_text())
    ci_lines = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    for command in (fast, end_to_end):
        assert command in ci_lines, f"{command!r} is not a line of .ci/run"
    # together they are the whole suite: the fast one installs and leaves out exactly what the other runs
    assert fast.startswith("bash scripts/install.sh && ") and fast.endswith('-n auto -m "not e2e"'), fast
    # The fast tests run on every core (pytest-xdist); the end-to-end ones in one process, since they share one
    # built smoke DAG (a session fixture, which each worker would build again).
    assert end_to_end == fast.split(" && ", 1)[1].replace('-n auto -m "not e2e"', "-m e2e"), end_to_end


def with_dry_run(command):
    """The command with `-n` right after the snakemake program, otherwise as printed."""
    words = shlex.split(command)
    at = next(i for i, w in enumerate(words) if not ENV_ASSIGNMENT.match(w))
    return shlex.join(words[: at + 1] + ["-n"] + words[at + 1:])


@pytest.fixture(scope="module")
def fresh_clone(tmp_path_factory, mirror, copy_workflow):
    """A clone's layout: <root>/clone with the workflow and .venv, the mirror at <root>/shared/data,
    where the README's `MULTIVEC_DATA_MIRROR=../shared/data` points from the clone."""
    root = tmp_path_factory.mktemp("layout")
    clone = copy_workflow(root / "clone")
    # a clone has the committed results too: joining the claims alone (--allowed-rules claims) reads them
    shutil.copytree(REPO / "results", clone / "results")
    (clone / ".venv").symlink_to(VENV_BIN.parent)
    (root / "shared").mkdir()
    (root / "shared" / "data").symlink_to(mirror)
    return clone


@pytest.mark.parametrize("doc, command", DOC_COMMANDS, ids=[f"{doc.relative_to(REPO)}: {command}"
                                                            for doc, command in DOC_COMMANDS])
def test_readme_snakemake_command_dry_runs_as_printed(doc, command, fresh_clone):
    env = dict(os.environ, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}", HF_HUB_OFFLINE="1")
    for line in setup_lines(doc.read_text(), command):
        setup = subprocess.run(["bash", "-c", line], cwd=fresh_clone, env=env, capture_output=True, text=True,
                               timeout=600)
        assert setup.returncode == 0, f"{line}\n{setup.stdout}{setup.stderr}"
    result = subprocess.run(["bash", "-c", with_dry_run(command)], cwd=fresh_clone, env=env,
                            capture_output=True, text=True, timeout=600)
    out = result.stdout + result.stderr
    assert result.returncode == 0, f"{command}\n{out}"
    # the DAG has jobs, and each results file the command names is in it (a rule target such as `all` or
    # `nugget` is checked by having jobs at all)
    targets = [word for word in shlex.split(command) if word.startswith("results/")]
    assert "Job stats" in out and all(target in out for target in targets), out


def test_command_extraction():
    text = "\n".join([
        "```bash", "# a comment", "bash scripts/install.sh && A=1 B=../x .venv/bin/snakemake --cores all t.csv",
        "snakemake t.csv --profile p  # trailing note", ".venv/bin/python -m multivec inspect PATH", "```",
        "snakemake outside a code block"])
    assert snakemake_commands(text) == ["A=1 B=../x .venv/bin/snakemake --cores all t.csv", "snakemake t.csv --profile p"]
    assert with_dry_run("A=1 .venv/bin/snakemake --cores all t.csv") == "A=1 .venv/bin/snakemake -n --cores all t.csv"
    block = "\n".join(["```bash", ".venv/bin/python make.py out", ".venv/bin/python -m server &",
                       "M=x .venv/bin/snakemake all --profile out", "```", "```bash", ".venv/bin/python other.py",
                       "```"])
    assert setup_lines(block, "M=x .venv/bin/snakemake all --profile out") == [".venv/bin/python make.py out"]


def test_only_lines_naming_snakemake_are_parsed():
    """A code block's YAML (or any other) line with an unbalanced apostrophe is not a command and is never parsed:
    parsing every line once failed the collection of this file on a docs page's YAML block."""
    text = "\n".join([
        "```yaml", "statistics:", "  note: the demo's seeds  # one apostrophe", "  paper: 'Qin & Van Durme's", "```",
        "```bash", "echo 'it's unbalanced", "snakemake's docs are online", ".venv/bin/snakemake -n nugget", "```"])
    assert snakemake_commands(text) == [".venv/bin/snakemake -n nugget"]
