"""The README a newcomer reads: short, current and pointing at files that exist.

- its results at a glance are what ``multivec.pipeline.results_at_a_glance`` renders from the committed
  results (so a rebuilt table or claim that is not carried into the README fails here);
- it is at most 250 lines;
- no user doc names an internal issue number or a commit hash (provenance lives in results/README.md);
- every relative link of the README and the docs resolves.
"""

import re
from pathlib import Path

import pytest

from multivec.pipeline import results_at_a_glance

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
USER_DOCS = [README, REPO / "config" / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINKED_DOCS = [*USER_DOCS, REPO / "results" / "README.md"]
ISSUE_REFERENCE = re.compile(r"\bissues? \d+|\(#\d+\)|\bPR \d+", re.I)
# a commit hash as docs used to cite them: 7-40 hex digits mixing letters and digits, standing alone
COMMIT_HASH = re.compile(r"(?<![\w/.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w-])")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def test_readme_results_at_a_glance_are_current():
    text = README.read_text(encoding="utf-8")
    assert results_at_a_glance.block_of(text) == results_at_a_glance.render(REPO / "results"), (
        "README's results at a glance differ from results/: run "
        "`.venv/bin/python -m multivec.pipeline.results_at_a_glance README.md`")


@pytest.mark.parametrize("work", sorted(results_at_a_glance.CLAIMS_PAGES))
def test_the_docs_claims_tables_are_current(work):
    """Each work's docs page shows its claims as rendered from results/claims.csv (no verdict typed in prose)."""
    page = REPO / results_at_a_glance.CLAIMS_PAGES[work]
    text = page.read_text(encoding="utf-8")
    rendered = results_at_a_glance.render_claims_blocks(REPO)[results_at_a_glance.CLAIMS_PAGES[work]]
    assert results_at_a_glance.block_of(text, *results_at_a_glance.claims_markers(work)) == rendered, (
        f"{page.relative_to(REPO)}'s claims table differs from results/claims.csv: run "
        "`.venv/bin/python -m multivec.pipeline.results_at_a_glance README.md`")


def test_a_claims_block_names_the_deciding_subtest_and_every_claim_has_a_short_name():
    rows = [{"id": "X1", "work": "w", "ours": "a 1.00", "decided_by": "1.1 greater: a − b PI", "difference": "0.5",
             "difference_lo": "0.1", "difference_hi": "0.9", "p": "0.01", "verdict": "holds"},
            {"id": "X2", "work": "w", "ours": "", "difference": "", "verdict": "not built"}]
    block = results_at_a_glance.claims_block(rows, {"X1": "a beats b", "X2": "later"}, "w")
    assert "| X1 | a beats b | a 1.00 | 1.1 greater: a − b PI: +0.50 [+0.10, +0.90], p = 0.0100 | **holds** |" in block
    assert "| X2 | later | – | – | **not built** |" in block
    assert set(results_at_a_glance.claim_shorts(REPO / "config" / "claims.yaml")) >= {"N1", "S1", "D1"}


def test_readme_is_at_most_250_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


@pytest.mark.parametrize("doc", USER_DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_user_docs_cite_no_issue_numbers_or_commit_hashes(doc):
    if not doc.exists():
        pytest.skip(f"{doc.relative_to(REPO)} is not written")
    text = doc.read_text(encoding="utf-8")
    assert not ISSUE_REFERENCE.findall(text), ISSUE_REFERENCE.findall(text)
    assert not COMMIT_HASH.findall(text), COMMIT_HASH.findall(text)


def test_the_reference_patterns_catch_what_they_should():
    issue, hash_sign = "issue", "#"  # the example is assembled so that this file cites no issue itself
    assert ISSUE_REFERENCE.findall(f"as {issue} 17 found, and ({hash_sign}18)") == [f"{issue} 17", f"({hash_sign}18)"]
    assert COMMIT_HASH.findall("at 5d31e20 and d11402c, not deadbeef, 1234567 or a sha256 " + "ab12" * 16) == [
        "5d31e20", "d11402c"]


def relative_links(doc):
    """(line number, target) of each relative Markdown link or image, anchors stripped."""
    for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue
            yield number, target.split("#")[0]


@pytest.mark.parametrize("doc", LINKED_DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(doc):
    if not doc.exists():
        pytest.skip(f"{doc.relative_to(REPO)} is not written")
    broken = [f"{doc.name}:{number}: {target}" for number, target in relative_links(doc)
              if not (doc.parent / target).exists()]
    assert not broken, broken


def test_link_extraction(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("[a](docs/data.md#part) ![f](../results/t.png)\n[w](https://x.org) [s](#top) [m](mailto:a@b.c)\n")
    assert list(relative_links(page)) == [(1, "docs/data.md"), (1, "../results/t.png")]
