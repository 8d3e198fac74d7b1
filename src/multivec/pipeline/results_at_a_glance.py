"""The README's "results at a glance" and the docs' claims tables, rendered from the committed results (shared
by the three works).

The block between ``<!-- results-at-a-glance:start -->`` and ``<!-- results-at-a-glance:end -->`` in
README.md is this module's output for ``results/``, and so is each work's claims table between
``<!-- claims:<work>:start -->`` and ``<!-- claims:<work>:end -->`` in its docs page (``CLAIMS_PAGES``: each
claim's short name from ``config/claims.yaml``, the rest from ``results/claims.csv``);
``tests/test_readme_results.py`` fails when they differ, so neither can go stale. Rewrite them after rebuilding
results with::

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


def representations_table(results: Path) -> str:
    """The representation matrix (``multivec.evaluation.representation_matrix``): each representation's value on
    every task it was scored on, each task on the units its column shares, and its index bytes per PI document."""
    from multivec.io.markdown_table import format_bytes

    rows = _rows(results / "representations.csv")
    tasks = list(dict.fromkeys(r["task"] for r in rows))  # the matrix's task order
    metric = {r["task"]: r["metric"] for r in rows}
    cells = {(r["representation"], r["task"]): r for r in rows}
    names = list(dict.fromkeys(r["representation"] for r in rows))
    body = []
    for name in names:
        values = []
        for task in tasks:
            r = cells.get((name, task))
            values.append("" if r is None else
                          f"{float(r['value']):.{3 if task == 'Lee' else 1}f}{' †' if r['pareto'] == 'True' else ''}")
        pi = cells.get((name, "PI"))
        values.append(format_bytes(float(pi["bytes_per_document"])) if pi and pi["bytes_per_document"] else "")
        body.append([name, *values])
    header = ["representation", *(f"{t} ({metric[t]})" for t in tasks), "bytes per PI document"]
    return ("**Every representation on every task** (`results/representations.csv`, 95% CIs there; each task on "
            "the units all its rows share; † = on the task's Pareto front of quality against index size; "
            "[docs/representations.md](docs/representations.md)).\n\n" + markdown_table(header, body))


def render(results: Path) -> str:
    """The block's Markdown, markers included (the representation matrix once it is built)."""
    parts = [claims_tally(_rows(results / "claims.csv")), nugget_table(results), subencoder_table(results),
             distill_table(results)]
    if (results / "representations.csv").exists():
        parts.append(representations_table(results))
    return "\n".join([START, "", *(part + "\n" for part in parts), END])


def block_of(text: str, start: str = START, end: str = END) -> str:
    """The block as it stands in ``text`` (markers included)."""
    if text.count(start) != 1 or text.count(end) != 1:
        raise ValueError(f"expected one {start} and one {end}")
    return text[text.index(start): text.index(end) + len(end)]


# Each work's docs page, whose claims table is rendered here (claims_block).
CLAIMS_PAGES = {"nugget": "docs/nugget.md", "subencoder": "docs/subencoder.md", "distill": "docs/distill.md"}


def claims_markers(work: str) -> tuple[str, str]:
    return f"<!-- claims:{work}:start -->", f"<!-- claims:{work}:end -->"


def _decided(claim: dict[str, str]) -> str:
    """The sub-test that decided the verdict: its name, difference [CI] and raw p (claims.csv's columns)."""
    if not claim.get("difference"):
        return "–"
    text = (f"{float(claim['difference']):+.2f} [{float(claim['difference_lo']):+.2f}, "
            f"{float(claim['difference_hi']):+.2f}]")
    if claim.get("p"):
        text += f", p = {float(claim['p']):.4f}"
    return f"{claim['decided_by']}: {text}" if claim.get("decided_by") else text


def claims_block(claims: list[dict[str, str]], shorts: dict[str, str], work: str) -> str:
    """One work's claims as its docs page shows them (markers included): id, the claim's short name, our
    numbers, the sub-test that decided and the verdict, in the claims file's order."""
    start, end = claims_markers(work)
    rows = [[c["id"], shorts[c["id"]], c.get("ours") or "–", _decided(c), f"**{c['verdict']}**"]
            for c in claims if c["work"] == work]
    if not rows:
        raise ValueError(f"results/claims.csv has no claim of work {work!r}")
    table = markdown_table(["id", "claim", "ours", "decided by: difference [CI], p", "verdict"], rows)
    return f"{start}\n{table}\n{end}"


def claim_shorts(claims_file: Path) -> dict[str, str]:
    """Each claim's short name (``short`` in config/claims.yaml)."""
    import yaml

    claims = yaml.safe_load(claims_file.read_text(encoding="utf-8"))["claims"]
    missing = [c["id"] for c in claims if not c.get("short")]
    if missing:
        raise ValueError(f"{claims_file}: claim(s) {missing} have no `short` name for the docs' claims tables")
    return {c["id"]: c["short"] for c in claims}


def render_claims_blocks(repo: Path) -> dict[str, str]:
    """``{docs page: its rendered claims block}`` from results/claims.csv and config/claims.yaml."""
    claims = _rows(repo / "results" / "claims.csv")
    shorts = claim_shorts(repo / "config" / "claims.yaml")
    return {page: claims_block(claims, shorts, work) for work, page in CLAIMS_PAGES.items()}


def rewrite(readme: Path, results: Path) -> bool:
    """Replace the README's block and the docs' claims blocks by a fresh render; True when one changed."""
    repo = results.parent
    changed = False
    targets = [(readme, START, END, render(results))]
    for (work, page), block in zip(CLAIMS_PAGES.items(), render_claims_blocks(repo).values()):
        targets.append((repo / page, *claims_markers(work), block))
    for path, start, end, fresh in targets:
        text = path.read_text(encoding="utf-8")
        updated = text.replace(block_of(text, start, end), fresh)
        if updated != text:
            path.write_text(updated, encoding="utf-8")
            changed = True
    return changed


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "README.md")
    changed = rewrite(target, target.resolve().parent / "results")
    print(f"{target} and the docs' claims tables: {'rewritten' if changed else 'already current'}")
