"""The command line: ``multivec`` (console script) and ``python -m multivec``: what --help says, the entry point."""

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from multivec.__main__ import COMMANDS, DESCRIPTION, main

REPO = Path(__file__).resolve().parents[1]


def _help() -> str:
    result = subprocess.run([sys.executable, "-m", "multivec", "--help"], capture_output=True, text=True, cwd=REPO,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_help_says_what_the_tool_is_and_lists_every_command_without_markup():
    text = _help()
    assert "`" not in text and "``" not in text and ":func:" not in text
    assert text.startswith("usage: python -m multivec")
    assert " ".join(DESCRIPTION.split()[:6]) in " ".join(text.split())
    commands = text.split("commands:\n", 1)[1]
    for name, (help_text, _, _) in COMMANDS.items():
        assert f"  {name}  " in commands or f"  {name} " in commands, name
        line = next(line for line in commands.splitlines() if line.strip().startswith(name + " "))
        assert line.split(None, 1)[1] == help_text  # one line each
    assert {"inspect", "mirror", "rehearsal-mirror"} <= set(COMMANDS)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_has_its_own_help(name, capsys):
    with pytest.raises(SystemExit) as info:
        main([name, "--help"])
    assert info.value.code == 0
    assert "`" not in capsys.readouterr().out


def test_no_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        main([])
    assert info.value.code == 2
    assert "COMMAND" in capsys.readouterr().err


def test_console_script_is_declared_and_resolves_to_main():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["multivec"] == "multivec.__main__:main"
    installed = [ep for ep in entry_points(group="console_scripts") if ep.name == "multivec"]
    if not installed:
        pytest.skip("the multivec console script is not installed: pip install -e . (scripts/install.sh)")
    assert installed[0].value == "multivec.__main__:main" and installed[0].load() is main


def test_console_script_runs_with_its_exit_status():
    script = Path(sys.executable).parent / "multivec"
    if not script.exists():
        pytest.skip(f"no console script {script}: pip install -e . (scripts/install.sh)")
    ok = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and ok.stdout.startswith("usage: multivec ")
    bad = subprocess.run([str(script), "inspect", "/nonexistent/artifact"], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 1 and bad.stderr.startswith("error: ")
