"""Table 2's evaluation: ranking tasks scored by encodings or BM25, and the assembled table.

Names load on first use (PEP 562): the workflow imports the encodings folder names
(``encoding_folders``) while it parses, and torch would otherwise cost every Snakemake start.
"""

from __future__ import annotations

from multivec.pipeline.lazy_exports import lazy_exports

_WHERE = {"RankingResult": "ranking_evaluation", "evaluate_with_bm25": "ranking_evaluation",
          "evaluate_with_encodings": "ranking_evaluation", "PAPER_TABLE2": "table2", "TABLE2_COLUMNS": "table2",
          "assemble_table2": "table2", "write_table2": "table2"}

__all__ = sorted(_WHERE)

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
