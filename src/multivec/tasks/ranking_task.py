"""The ranking-task folder shared by Table 2's two tasks (NUGGET §6.1, Appendix A).

Exactly the NUGGET release's format (github.com/hiaoxui/nugget-data):

- ``docs.txt``: ``id<TAB>text`` a line;
- ``task.jsonl``: one query a line: ``source`` (document id), ``candidates`` (20 document
  ids) and ``answer`` (index of the right candidate in ``candidates``).

``RankingTask.load`` checks what the evaluation relies on and names file:line on failure:
ids are strings and every id exists in ``docs.txt``, ``answer`` is an integer index into
``candidates`` (not a bool), no candidate is listed twice and no source is its own
candidate, every query has as many candidates as the first (one chance level), no query
and no document id is defined twice, and the documents are English.

Empty documents: the released PI dev set has two (``L873`` and ``L874``, query documents
whose reference side is empty). They are kept as empty strings by default, so the set
still has its 1024 queries, and a warning lists them; ``on_empty="error"`` refuses them.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from multivec.data.language import LanguageCheck
from multivec.io import FirstSeen, MalformedInputError, iter_jsonl, read_docs_tsv, write_docs_tsv, write_jsonl

log = logging.getLogger(__name__)

DOCS_FILE = "docs.txt"
TASK_FILE = "task.jsonl"


def query_unit_id(position: int, source: str) -> str:
    """The evaluation-unit id of a ranking task's query: its position and its source document,
    ``"<position>:<source>"`` (a source may repeat). Every work's per-query scores on PI and RR use it, so that
    their units pair up across works (the representation matrix)."""
    return f"{int(position)}:{source}"


@dataclass
class RankingQuery:
    source: str
    candidates: list[str]
    answer: int

    @property
    def answer_id(self) -> str:
        return self.candidates[self.answer]

    def to_row(self) -> dict[str, Any]:
        return {"source": self.source, "candidates": list(self.candidates), "answer": int(self.answer)}


@dataclass
class RankingTask:
    documents: dict[str, str]
    queries: list[RankingQuery]
    empty_document_ids: list[str] = field(default_factory=list)

    @property
    def n_queries(self) -> int:
        return len(self.queries)

    def used_document_ids(self) -> list[str]:
        """Every id a query refers to (sources first, then candidates), each once."""
        seen: dict[str, None] = {}
        for query in self.queries:
            seen.setdefault(query.source)
        for query in self.queries:
            for candidate in query.candidates:
                seen.setdefault(candidate)
        return list(seen)

    def first(self, n_queries: int) -> "RankingTask":
        """The task cut to its first ``n_queries`` queries (smaller runs of a released set)."""
        if n_queries > len(self.queries):
            raise ValueError(f"asked for {n_queries} queries but the task has {len(self.queries)}")
        queries = self.queries[:n_queries]
        kept = RankingTask(self.documents, queries).used_document_ids()
        return RankingTask({i: self.documents[i] for i in kept}, queries,
                           [i for i in self.empty_document_ids if i in set(kept)])

    def validate(self, where: str = "task") -> None:
        for number, query in enumerate(self.queries, start=1):
            _check_query(query, self.documents, where, number)

    @classmethod
    def load(cls, folder: str | os.PathLike, on_empty: str = "keep") -> "RankingTask":
        """Read and validate ``docs.txt`` + ``task.jsonl`` from ``folder``.

        ``on_empty``: ``"keep"`` (default) keeps empty documents as ``""`` and logs their ids;
        ``"error"`` raises on the first one.
        """
        if on_empty not in ("keep", "error"):
            raise ValueError(f"on_empty must be 'keep' or 'error', not {on_empty!r}")
        folder = Path(folder)
        docs_path, task_path = folder / DOCS_FILE, folder / TASK_FILE
        for path in (docs_path, task_path):
            if not path.is_file():
                raise FileNotFoundError(f"ranking task folder {folder} has no {path.name}")
        documents = read_docs_tsv(docs_path, on_empty=on_empty, check=LanguageCheck(docs_path, "en", "documents"))
        empty = [doc_id for doc_id, text in documents.items() if not text]
        queries = []
        sources = FirstSeen(task_path, "query")
        first_count: tuple[int, int] | None = None  # (candidates, line) of the first query
        for number, row in iter_jsonl(task_path):
            missing = {"source", "candidates", "answer"} - set(row)
            if missing:
                raise MalformedInputError(task_path, number, f"missing field(s) {sorted(missing)}")
            query = RankingQuery(*_query_fields(row, task_path, number))
            _check_query(query, documents, task_path, number)
            sources.add(query.source, number)
            first_count = first_count or (len(query.candidates), number)
            if len(query.candidates) != first_count[0]:  # accuracy and MRR assume one chance level
                raise MalformedInputError(task_path, number, f"{len(query.candidates)} candidates, but line "
                                                             f"{first_count[1]} has {first_count[0]}")
            queries.append(query)
        if not queries:
            raise MalformedInputError(task_path, None, "no queries")
        if empty:
            log.warning("%s: %d empty document(s) kept as empty text: %s", docs_path, len(empty), ", ".join(empty))
        return cls(documents, queries, empty)

    def save(self, folder: str | os.PathLike) -> None:
        """Write ``docs.txt`` (only the documents the queries use) and ``task.jsonl``."""
        self.validate()
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        write_docs_tsv(folder / DOCS_FILE, {i: self.documents[i] for i in self.used_document_ids()})
        write_jsonl(folder / TASK_FILE, (q.to_row() for q in self.queries))


def _query_fields(row: dict[str, Any], where, number: int) -> tuple[str, list[str], int]:
    """``source``, ``candidates`` and ``answer`` of a task.jsonl row, type-checked: ids are strings
    (``null`` is not the id "None") and ``answer`` an integer (``true`` is not 1)."""
    source, candidates, answer = row["source"], row["candidates"], row["answer"]
    if not isinstance(source, str):
        raise MalformedInputError(where, number, f"source must be a document id string, got {source!r}")
    if not isinstance(candidates, list) or not all(isinstance(c, str) for c in candidates):
        raise MalformedInputError(where, number, f"candidates must be a list of document id strings, got "
                                                 f"{str(candidates)[:80]}")
    if isinstance(answer, bool) or not isinstance(answer, int):
        raise MalformedInputError(where, number, f"answer must be an integer index, got {answer!r}")
    return source, candidates, answer


def _check_query(query: RankingQuery, documents: dict[str, str], where, number: int) -> None:
    def fail(what: str):
        raise MalformedInputError(where, number, what)

    if query.source not in documents:
        fail(f"source {query.source!r} is not in {DOCS_FILE}")
    if not query.candidates:
        fail("no candidates")
    for candidate in query.candidates:
        if candidate not in documents:
            fail(f"candidate {candidate!r} is not in {DOCS_FILE}")
    if query.source in query.candidates:
        fail(f"source {query.source!r} is one of its own candidates")
    if len(set(query.candidates)) != len(query.candidates):
        duplicates = sorted({c for c in query.candidates if query.candidates.count(c) > 1})
        fail(f"duplicate candidate(s) {duplicates}")
    if not 0 <= query.answer < len(query.candidates):
        fail(f"answer {query.answer} is not an index into {len(query.candidates)} candidates")
