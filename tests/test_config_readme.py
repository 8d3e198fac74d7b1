"""config/README.md, the configuration page of the Snakemake workflow catalog's convention, cannot go stale: its
parameter table names every top-level key of config/config.yaml and of config/schema.yaml (and no other), its
overlay table every file in config/, and its relative links resolve. The catalog's own file,
.snakemake-workflow-catalog.yml, holds the keys the catalog reads."""

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
README = REPO / "config" / "README.md"


def table_after(heading: str) -> list[list[str]]:
    """The cells of each body row of the first Markdown table under ``heading``."""
    text = README.read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    assert len(rows) > 2 and set(rows[1].replace("|", "").strip()) <= set("-: "), rows[:2]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


def first_code(cell: str) -> str:
    found = re.search(r"`([^`]+)`", cell)
    assert found, cell
    return found.group(1)


def test_the_parameter_table_names_every_top_level_key_and_no_other():
    keys = [first_code(row[0]) for row in table_after("Top-level parameters")]
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    schema = yaml.safe_load((REPO / "config" / "schema.yaml").read_text(encoding="utf-8"))
    expected = set(config) | set(schema["properties"])
    assert len(keys) == len(set(keys)), keys
    assert set(keys) == expected, (f"missing from config/README.md: {sorted(expected - set(keys))}; "
                                   f"not config keys: {sorted(set(keys) - expected)}")
    rows = table_after("Top-level parameters")
    assert all(len(row) == 4 and all(row) for row in rows), [row[0] for row in rows if len(row) != 4 or not all(row)]


def test_the_overlay_table_names_every_file_in_config():
    listed = {first_code(row[0]) for row in table_after("Scale overlays and other files here")}
    present = {p.name for p in (REPO / "config").iterdir() if p.suffix in (".yaml", ".yml")}
    assert listed == present, (sorted(present - listed), sorted(listed - present))


def test_relative_links_resolve():
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    relative = [link.split("#", 1)[0] for link in links if not re.match(r"[a-z]+:", link) and not link.startswith("#")]
    assert relative, "no relative links found: the pattern no longer matches"
    broken = [link for link in relative if link and not (README.parent / link).exists()]
    assert not broken, broken


def test_the_workflow_catalog_file():
    catalog = yaml.safe_load((REPO / ".snakemake-workflow-catalog.yml").read_text(encoding="utf-8"))
    usage = catalog["usage"]
    assert set(usage) == {"mandatory-flags", "software-stack-deployment", "report"}, usage
    assert set(usage["mandatory-flags"]) == {"desc", "flags"} and "--cores" in usage["mandatory-flags"]["flags"]
    deployment = usage["software-stack-deployment"]
    assert deployment and all(isinstance(v, bool) for v in deployment.values()) and any(deployment.values())
    assert deployment["conda"] is True and all((REPO / "envs").glob("*.yaml"))
    assert usage["report"] is True and (REPO / "workflow" / "report" / "workflow.rst").is_file()
