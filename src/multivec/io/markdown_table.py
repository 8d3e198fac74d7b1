"""Markdown (GitHub pipe) tables: the one place their lines are spelled.

``markdown_table(header, rows)`` returns the header line ``| a | b |``, the separator ``|---|---|`` and one
line per row. Cells are already-formatted strings: each writer keeps its own cell formatting; this module
only joins them, and refuses a row whose width is not the header's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def markdown_row(cells: Sequence[str]) -> str:
    """One table line: ``| c1 | c2 | ... |``."""
    return "| " + " | ".join(cells) + " |"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """The table's lines (no trailing newline): header, separator, then one line per row.

    ValueError when a row has not as many cells as the header has columns."""
    header = list(header)
    lines = [markdown_row(header), "|" + "---|" * len(header)]
    for number, row in enumerate(rows, start=1):
        cells = list(row)
        if len(cells) != len(header):
            raise ValueError(f"Markdown table row {number} has {len(cells)} cells, the header "
                             f"{len(header)} columns: {cells!r}")
        lines.append(markdown_row(cells))
    return lines


def format_bytes(n: float | None) -> str:
    """A byte count as a reader reads it (``1.5 kB``, ``2.3 MB``); empty when missing."""
    if n is None or n != n:
        return ""
    for unit, size in (("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} B"
