"""The README's "results at a glance", rendered from the committed results (shared by the three works).

The block between ``<!-- results-at-a-glance:start -->`` and ``<!-- results-at-a-glance:end -->`` in
README.md is this module's output for ``results/``; ``tests/test_readme_results.py`` fails when the two
differ, so the README cannot go stale. Rewrite the block after rebuilding results with::

    .venv/bin/python -m multivec.pipeline.results_at_a_glance README.md

Every number comes from a results file (the headline tables and ``results/claims.csv``); the claims
tally counts the papers' claims and this reproduction's own claims (claim text starting "(ours")
apart. Verdicts are read from ``results/claims.csv``, never written here.
"""

from __future__ import annotations

import csv
import sys
from collections import Counter
from pathlib import Path

from multivec.io.markdown_table import markdown_table as _markdown_lines

START = "<!-- results-at-a-glance:start -->"
END = "<!-- results-at-a-glance:end -->"
VERDICTS = ("holds", "contradicted", "inconclusive", "not built")
WORKS = {"nugget": "NUGGET", "subencoder": "Sub-sentence encoder", "distill": "Distillation"}

# (results file, row ids shown, row label) per work: the rows a reader compares first
NUGGET_ROWS = {
    "nugget_mt_r0.1": "NUGGET, MT, r = 0.1",
    "tsdae_mt": "TSDAE, MT (one vector)",
    "nugget_ae_r0.25": "NUGGET, AE, r = 0.25",
    "tsdae_ae": "TSDAE, AE (one vector)",
    "colbart": "ColBART (every token)",
    "token_pooling_r0.1": "token pooling, r = 0.1",
    "bm25": "BM25",
}
DISTILL_ROWS = {
    "structural_teacher": "structural teacher (SBERT mpnet)",
    "contextual_teacher": "contextual teacher (Paragraph Vector)",
    "student_untrained": "student, untrained",
    "student_ls_cosine": "student, L_S cosine",
    "student_lc_soft_cca": "student, L_C SoftCCA",
    "student_ls_cosine+lc_soft_cca": "student, both",
}


def markdown_table(header, rows) -> str:
    return "\n".join(_markdown_lines(header, rows))


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _cell(row: dict[str, str], metric: str, digits: int = 2) -> str:
    """``mean [lo, hi]`` as the tables' Markdown shows it; empty where the file has no value."""
    if not row.get(metric):
        return ""
    value = f"{float(row[metric]):.{digits}f}"
    if row.get(f"{metric}_lo") and row.get(f"{metric}_hi"):
        value += f" [{float(row[f'{metric}_lo']):.{digits}f}, {float(row[f'{metric}_hi']):.{digits}f}]"
    return value


def _paper(row: dict[str, str], column: str) -> str:
    return f"{float(row[column]):.2f}" if row.get(column) else "–"


def _select(rows: list[dict[str, str]], wanted: dict[str, str]) -> list[tuple[str, dict[str, str]]]:
    by_id = {row["row"]: row for row in rows}
    missing = [name for name in wanted if name not in by_id]
    if missing:
        raise ValueError(f"results at a glance: rows {missing} are not in the table")
    return [(label, by_id[name]) for name, label in wanted.items()]


def _is_ours(claim: dict[str, str]) -> bool:
    return claim["claim"].startswith("(ours")


def claims_tally(claims: list[dict[str, str]]) -> str:
    counts = Counter((claim["work"], _is_ours(claim), claim["verdict"]) for claim in claims)
    unknown = {claim["verdict"] for claim in claims} - set(VERDICTS)
    if unknown:
        raise ValueError(f"results/claims.csv has verdicts {sorted(unknown)} the README does not count")
    table = []
    for work, name in WORKS.items():
        for ours in (False, True):
            row = [counts[(work, ours, verdict)] for verdict in VERDICTS]
            if ours and not any(row):
                continue
            table.append([f"{name}, {'our own claims' if ours else 'the paper'}", *map(str, row)])
    papers = sum(1 for claim in claims if not _is_ours(claim))
    scales = sorted({claim["scale"] for claim in claims})
    head = (f"{len(claims)} claims at {'/'.join(scales)} scale, {papers} of them the papers' and "
            f"{len(claims) - papers} our own (from `results/claims.csv`):")
    return head + "\n\n" + markdown_table(["claims of", *VERDICTS], table)


def nugget_table(results: Path) -> str:
    rows = _select(_rows(results / "table2.csv"), NUGGET_ROWS)
    body = [[label, _cell(row, "PI"), _paper(row, "paper_PI"), _cell(row, "RR"), _paper(row, "paper_RR"),
             f"{float(row['vectors_per_doc']):.1f}" if row.get("vectors_per_doc") else ""] for label, row in rows]
    seeds = sorted({row["n_seeds"] for _, row in rows})
    return ("**NUGGET, Table 2** (MRR×100 over 20 candidates, 95% CI over queries, "
            f"{'/'.join(seeds)} seed; `results/table2.csv`). Our RR set is rebuilt from WikiText-2, so its "
            "level is not the paper's; compare rows, not columns.\n\n"
            + markdown_table(["row", "PI", "PI, paper", "RR", "RR, paper", "vectors/doc"], body))


def subencoder_table(results: Path) -> str:
    rows = [row for row in _rows(results / "subencoder_table1.csv") if row["protocol"] == "authors"]
    body = [[row["row"].replace(" [authors]", ""), _cell(row, "P@1"), _paper(row, "paper_P@1"),
             _cell(row, "R@5"), _paper(row, "paper_R@5")] for row in rows]
    return ("**Sub-sentence encoder, Table 1** (PropSegment dev atomic-fact retrieval, the authors' protocol, "
            "95% CI over queries; `results/subencoder_table1.csv`; the paper's numbers where it has the same "
            "encoder).\n\n" + markdown_table(["row", "P@1", "P@1, paper", "R@5", "R@5, paper"], body))


def distill_table(results: Path) -> str:
    rows = _select(_rows(results / "distill_table.csv"), DISTILL_ROWS)
    body = [[label, _cell(row, "lee_pearson", 3), _cell(row, "polarity_accuracy"), _cell(row, "pi_mrr"),
             _cell(row, "rr_mrr")] for label, row in rows]
    return ("**Distillation, demo tasks** (95% CIs; `results/distill_table.csv`; the thesis reports no numbers "
            "on these tasks).\n\n"
            + markdown_table(["row", "Lee Pearson", "polarity acc.", "PI MRR×100", "RR MRR×100"], body))


def render(results: Path) -> str:
    """The block's Markdown, markers included."""
    parts = [claims_tally(_rows(results / "claims.csv")), nugget_table(results), subencoder_table(results),
             distill_table(results)]
    return "\n".join([START, "", *(part + "\n" for part in parts), END])


def block_of(text: str) -> str:
    """The block as it stands in ``text`` (markers included)."""
    if text.count(START) != 1 or text.count(END) != 1:
        raise ValueError(f"expected one {START} and one {END}")
    return text[text.index(START): text.index(END) + len(END)]


def rewrite(readme: Path, results: Path) -> bool:
    """Replace the README's block by a fresh render; True when it changed."""
    text = readme.read_text(encoding="utf-8")
    updated = text.replace(block_of(text), render(results))
    if updated != text:
        readme.write_text(updated, encoding="utf-8")
    return updated != text


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "README.md")
    changed = rewrite(target, target.resolve().parent / "results")
    print(f"{target}: results at a glance {'rewritten' if changed else 'already current'}")
