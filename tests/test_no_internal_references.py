"""Text written by hand cites no internal issue and names no docs page that does not exist.

A reader of the code, the rules, the tests or the docs has no access to the project's issue tracker, so a
comment, docstring, error message or heading that cites a tracker entry by its number (or as "the" one)
tells them nothing: each says what it means instead. And a docs page that was merged into another one (a former
decisions page, say) is named by the page and section that now hold its content.

Scanned: every file under the hand-written parts of the repository (``HAND_WRITTEN``). Not scanned:
``results/`` (the build writes it; its provenance notes may name commits), ``.git``, ``.venv`` and the
git-ignored outputs listed in ``IGNORED_DIRS``. Commit hashes are checked for the user docs by
tests/test_readme_results.py (investigation write-ups may record the commit a run was made at).
"""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HAND_WRITTEN = ["src", "rules", "workflow", "scripts", "tests", "docs", "config", "benchmarks", "profiles", "envs",
                "requirements", ".ci", "README.md", "Snakefile", "pyproject.toml", "CITATION.cff",
                ".snakemake-workflow-catalog.yml"]
IGNORED_DIRS = {"__pycache__", ".pytest_cache", ".snakemake", ".ruff_cache"}
IGNORED_PATHS = {"benchmarks/rules"}  # git-ignored: the benchmark files Snakemake writes
# results/ is written by the build, except its provenance page and the investigation write-ups and their scripts.
HAND_WRITTEN_RESULTS = ["results/README.md"]
HAND_WRITTEN_EXPERIMENTS = ("results/experiments", (".md", ".py"))

# The word for a tracker entry followed by its number (singular or plural, with or without a hash sign, the
# number wrapped onto the next line, also after a comment's hash), the word after "the", a pull request's
# number, or a hash sign and a number standing alone, except where a record is numbered (a cluster,
# segmentation or proposition in a reader's error message) or a kernel build is (followed by SMP).
# test_an_issue_citation_is_found shows each form.
ISSUE_REFERENCE = re.compile(
    r"\bissues?\s+(?:#\s+)?#?\d+"
    r"|\bthe\s+issue(?:'s)?\b"
    r"|\b(?:PR|pull\s+request)\s+#?\d+"
    r"|(?<![\w&#])(?<!cluster )(?<!segmentation )(?<!proposition )#\d+\b(?! SMP)",
    re.I)
# a docs page named by its path (anywhere) ...
DOCS_PATH = re.compile(r"(?<![\w.-])docs/([\w.-]+\.md)\b")
# ... or, inside docs/, by its bare name
BARE_PAGE = re.compile(r"(?<![\w/.-])([\w-]+\.md)\b")


def hand_written_files():
    yield from (REPO / name for name in HAND_WRITTEN_RESULTS)
    folder, suffixes = HAND_WRITTEN_EXPERIMENTS
    yield from (f for f in sorted((REPO / folder).rglob("*")) if f.is_file() and f.suffix in suffixes)
    for root in HAND_WRITTEN:
        path = REPO / root
        if path.is_file():
            yield path
        elif path.is_dir():
            for file in sorted(path.rglob("*")):
                relative = file.relative_to(REPO)
                if (file.is_file() and not IGNORED_DIRS.intersection(relative.parts)
                        and not any(part.endswith(".egg-info") for part in relative.parts)
                        and not any(str(relative).startswith(ignored + "/") for ignored in IGNORED_PATHS)):
                    yield file


def text_of(file):
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError:  # a binary fixture
        return ""


def line_of(text, position):
    return text.count("\n", 0, position) + 1


def issue_citations(text):
    """(line, matched text) of each issue citation in ``text``."""
    return [(line_of(text, m.start()), " ".join(m.group().split())) for m in ISSUE_REFERENCE.finditer(text)]


def missing_docs_pages(text, in_docs=False):
    """(line, name) of each docs page ``text`` names that is not in docs/; inside docs/, a bare name may also be
    the README or a results file (docs name results/ files by their bare names in tables)."""
    missing = [(line_of(text, m.start()), f"docs/{m.group(1)}") for m in DOCS_PATH.finditer(text)
               if not (REPO / "docs" / m.group(1)).exists()]
    if in_docs:
        missing += [(line_of(text, m.start()), m.group(1)) for m in BARE_PAGE.finditer(text)
                    if not any((folder / m.group(1)).exists() for folder in (REPO / "docs", REPO, REPO / "results"))]
    return missing


def _relative(file):
    return str(file.relative_to(REPO))


def test_no_hand_written_file_cites_an_internal_issue():
    found = [f"{_relative(file)}:{line}: {cited}" for file in hand_written_files()
             for line, cited in issue_citations(text_of(file))]
    assert not found, "say what is meant instead of citing a tracker entry:\n" + "\n".join(found)


def test_no_hand_written_file_names_a_docs_page_that_does_not_exist():
    found = [f"{_relative(file)}:{line}: {page}" for file in hand_written_files()
             for line, page in missing_docs_pages(text_of(file), in_docs=file.parent == REPO / "docs")]
    assert not found, "name the docs page (and section) that holds the content now:\n" + "\n".join(found)


def test_the_hand_written_parts_are_scanned():
    files = {_relative(file) for file in hand_written_files()}
    assert {"README.md", "Snakefile", "rules/common.smk", "docs/pipeline.md", "config/config.yaml",
            "tests/test_no_internal_references.py", "src/multivec/__init__.py", "results/README.md",
            "results/experiments/nugget_ae_r0.25_learning_rate/README.md",
            "results/experiments/nugget_ae_r0.25_learning_rate/plot_cost.py"} <= files
    built = [name for name in files if name.startswith("results/") and name != "results/README.md"
             and not (name.startswith("results/experiments/") and name.endswith((".md", ".py")))]
    assert not built, built  # what the build writes is not scanned
    assert not any(name.startswith((".git/", ".venv/")) or "__pycache__" in name for name in files)


# The examples are assembled from pieces so that this file passes its own scan.
ISSUE, HASH, DOCS = "issue", "#", "docs/"


@pytest.mark.parametrize("text", [
    f"(see {ISSUE} 17; src/x.py)", f"{ISSUE.title()} 19's targets", f"as {ISSUE}s 12 and 14 asked",
    f"{ISSUE} {HASH}17", f"the demo default; {ISSUE}\n20): the oracle", f"# wrapped {ISSUE}\n# 21: item 4",
    f"quoted in the {ISSUE} are", f"the {ISSUE}'s targets", f"fixed in {HASH}23", f"({HASH}18)", "P" "R 12",
])
def test_an_issue_citation_is_found(text):
    assert issue_citations(text), text


@pytest.mark.parametrize("text", [
    f"cluster {HASH}0: key 'cluster_id' missing", f"segmentation {HASH}0 sentence_id",
    f"proposition {HASH}1: indexes past", f"Linux 6.1.0 {HASH}1 SMP PREEMPT_DYNAMIC", "duplicate pair 'ch1#0'",
    "Use&#160;the shell", "45%|####5     |", "an issue with the tokenizer", "the issuer's key", "tissue 12",
    "reissue 3 jobs", "# 17 steps", "pr01",
])
def test_ordinary_text_is_not_an_issue_citation(text):
    assert not issue_citations(text), text


def test_a_missing_docs_page_is_found():
    text = (f"see {DOCS}pipeline.md and\n`{DOCS}decisions.md` (*Paper scale*), [x](nowhere.md), README.md, "
            "nugget_fig5_shares.md")
    assert missing_docs_pages(text) == [(2, f"{DOCS}decisions.md")]
    assert missing_docs_pages(text, in_docs=True) == [(2, f"{DOCS}decisions.md"), (2, "nowhere.md")]
    assert missing_docs_pages(f"results/{'x'}.md, ../{DOCS}data.md", in_docs=True) == []
