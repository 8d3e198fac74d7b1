"""Two claims files side by side (shared by the works): which verdicts a rebuild, a new statistical method or a
run at another scale changed, with the difference and CI each build computed.

``verdict_changes(before, after)`` reads two ``results/claims.csv`` files (the claims table the ``claims`` rule
writes: one row per claim, ``id`` and ``verdict`` at least) and gives one row per claim id found in either:
its verdict and difference [CI] before and after, and whether the verdict changed. A claim in one file only has
the verdict ``absent`` in the other. Columns a file lacks (an older claims table has no ``decided_by``) are left
empty, never guessed.

From the command line (``python -m multivec.statistics.claims_diff BEFORE AFTER [--changed-only] [--out FILE]``)
it prints, or writes, the Markdown table; the ``before`` file may be an older commit's, e.g.
``git show <rev>:results/claims.csv > before.csv``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import Sequence

import pandas as pd

from multivec.io.markdown_table import markdown_table

REQUIRED = ("id", "verdict")
ABSENT = "absent"
COLUMNS = ["id", "claim", "verdict_before", "verdict_after", "changed", "difference_before", "difference_after",
           "decided_by_after"]


def read_claims_table(path: str | os.PathLike) -> pd.DataFrame:
    """A claims table indexed by claim id; FileNotFoundError or ValueError naming the file otherwise."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no claims table there (the claims rule writes results/claims.csv)")
    table = pd.read_csv(path, dtype={"id": str})
    missing = [c for c in REQUIRED if c not in table.columns]
    if missing:
        raise ValueError(f"{path}: not a claims table, it lacks the column(s) {missing} "
                         f"(it has {list(table.columns)[:8]})")
    duplicated = sorted(set(table["id"][table["id"].duplicated()]))
    if duplicated:
        raise ValueError(f"{path}: claim id(s) {duplicated} appear more than once")
    return table.set_index("id", drop=False)


def _number(value) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def difference_text(row: pd.Series | None) -> str:
    """``+2.47 [1.78, 3.18]``, the difference without a CI when the build wrote none, or empty."""
    if row is None:
        return ""
    difference = _number(row.get("difference"))
    if difference is None:
        return ""
    lo, hi = _number(row.get("difference_lo")), _number(row.get("difference_hi"))
    return f"{difference:+.2f}" + (f" [{lo:.2f}, {hi:.2f}]" if lo is not None and hi is not None else "")


def _text(row: pd.Series | None, column: str) -> str:
    if row is None or column not in row.index:
        return ""
    value = row[column]
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def verdict_changes(before: str | os.PathLike, after: str | os.PathLike) -> pd.DataFrame:
    """One row per claim id of either file (``COLUMNS``), in the order of ``after`` then claims only ``before``
    has."""
    old, new = read_claims_table(before), read_claims_table(after)
    ids = list(new.index) + [i for i in old.index if i not in new.index]
    records = []
    for claim_id in ids:
        was = old.loc[claim_id] if claim_id in old.index else None
        now = new.loc[claim_id] if claim_id in new.index else None
        verdict_before = _text(was, "verdict") if was is not None else ABSENT
        verdict_after = _text(now, "verdict") if now is not None else ABSENT
        records.append({"id": claim_id, "claim": _text(now if now is not None else was, "claim"),
                        "verdict_before": verdict_before, "verdict_after": verdict_after,
                        "changed": verdict_before != verdict_after,
                        "difference_before": difference_text(was), "difference_after": difference_text(now),
                        "decided_by_after": _text(now, "decided_by")})
    return pd.DataFrame.from_records(records, columns=COLUMNS)


def changes_markdown(changes: pd.DataFrame, changed_only: bool = False) -> str:
    """The table as Markdown: id, verdict before -> after (bold where it changed), the differences and, where the
    new build names it, the comparison that decided."""
    rows = changes[changes["changed"]] if changed_only else changes
    header = ["claim", "verdict before", "verdict after", "difference before", "difference after", "decided by"]
    body = [[r.id, r.verdict_before, f"**{r.verdict_after}**" if r.changed else r.verdict_after,
             r.difference_before, r.difference_after, r.decided_by_after] for r in rows.itertuples()]
    summary = (f"{int(changes['changed'].sum())} of {len(changes)} verdicts changed" if len(changes) else
               "no claims in either file")
    return "\n".join([summary + ".", "", *markdown_table(header, body)]) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m multivec.statistics.claims_diff", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("before", help="the older claims table (results/claims.csv of another build)")
    parser.add_argument("after", help="the newer claims table")
    parser.add_argument("--changed-only", action="store_true", help="list only the claims whose verdict changed")
    parser.add_argument("--out", help="write the Markdown here instead of printing it")
    args = parser.parse_args(argv)
    try:
        text = changes_markdown(verdict_changes(args.before, args.after), args.changed_only)
    except (FileNotFoundError, ValueError) as error:
        print(f"claims_diff: {error}", file=sys.stderr)
        return 2
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
