"""Table 2's ranking tasks: the shared task format, paraphrase identification, passage reranking."""

from multivec.tasks.ranking_task import RankingQuery, RankingTask

__all__ = ["RankingQuery", "RankingTask"]
