"""Table 2's evaluation: ranking tasks scored by encodings or BM25, and the assembled table.

Names load on first use (PEP 562): the workflow imports the encodings folder names
(``encoding_folders``) while it parses, and torch would otherwise cost every Snakemake start.
"""

from __future__ import annotations

import importlib

_WHERE = {"RankingResult": "ranking_evaluation", "evaluate_with_bm25": "ranking_evaluation",
          "evaluate_with_encodings": "ranking_evaluation", "PAPER_TABLE2": "table2", "TABLE2_COLUMNS": "table2",
          "assemble_table2": "table2", "write_table2": "table2"}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
