"""Table 2's evaluation: ranking tasks scored by encodings or BM25, and the assembled table."""

from multivec.evaluation.ranking_evaluation import RankingResult, evaluate_with_bm25, evaluate_with_encodings
from multivec.evaluation.table2 import PAPER_TABLE2, TABLE2_COLUMNS, assemble_table2, write_table2

__all__ = ["RankingResult", "evaluate_with_bm25", "evaluate_with_encodings", "PAPER_TABLE2", "TABLE2_COLUMNS",
           "assemble_table2", "write_table2"]
