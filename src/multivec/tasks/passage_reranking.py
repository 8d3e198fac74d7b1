"""Passage reranking (RR) built from WikiText (NUGGET §6.1, Appendix A).

Recipe: for an article with at least two sections, its first section (the text before the
first ``= =`` heading) is the query, and one other section of the same article, drawn at
random, is the answer. The 19 negatives are the sections BM25 ranks highest with the query
text as query, over the non-first sections of all articles, excluding the query's own
article (and any section whose text equals the answer's). The paper draws 1024 queries from
WikiText-103 train; the released ``task.jsonl`` cannot be used here because its
``docs.txt`` was not released.

Ids: queries are ``L<q>`` (q-th query), sections ``R<j>`` (j-th non-first section of the
parsed articles, in file order), as in the release.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from tqdm.auto import tqdm

from multivec.data.wikitext import Article
from multivec.io import EmptyOutputError, check_minimum
from multivec.retrieval.bm25 import BM25Index
from multivec.tasks.ranking_task import RankingQuery, RankingTask

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SectionRef:
    article: int  # index into the article list
    section: int  # index into that article's sections (>= 1: never the first)
    text: str


def non_first_sections(articles: Sequence[Article]) -> list[SectionRef]:
    """Every section but each article's first, in file order: the RR retrieval corpus."""
    return [SectionRef(a, s, section.text)
            for a, article in enumerate(articles)
            for s, section in enumerate(article.sections) if s >= 1]


def eligible_articles(articles: Sequence[Article]) -> list[int]:
    """Articles that can give a query: at least two sections (a first one and an answer)."""
    return [a for a, article in enumerate(articles) if len(article.sections) >= 2]


def build_passage_reranking_task(articles: Sequence[Article], n_queries: int | None = None, n_negatives: int = 19,
                                 seed: int = 0, show_progress: bool = True, *, min_queries: int | None = None,
                                 source: str = "the WikiText input",
                                 counts: dict | None = None) -> RankingTask:
    """The RR task (Appendix A). ``n_queries``: None = every eligible article; else a seeded
    uniform sample of that many eligible articles, in file order. Deterministic given ``seed``.

    No article, or no article with two sections, raises ``EmptyOutputError`` naming ``source``;
    fewer than ``min_queries`` queries log a warning (e.g. a WikiText file that shrank). The
    counts (articles, sections, eligible articles, queries, warnings) go into ``counts``.
    """
    counts = counts if counts is not None else {}
    counts.setdefault("warnings", [])
    rng = np.random.default_rng(seed)
    eligible = eligible_articles(articles)
    counts.update(articles=len(articles), sections=sum(len(a.sections) for a in articles),
                  eligible_articles=len(eligible))
    check_minimum("WikiText articles", len(articles), None, source)
    if not eligible:
        raise EmptyOutputError(f"{source}: no article has two or more sections")
    if n_queries is not None and n_queries < len(eligible):
        chosen = [eligible[i] for i in np.sort(rng.choice(len(eligible), size=n_queries, replace=False))]
    else:
        if n_queries is not None and n_queries > len(eligible):
            log.warning("asked for %d queries but only %d articles have two or more sections; using all",
                        n_queries, len(eligible))
        chosen = eligible
    corpus = non_first_sections(articles)
    by_article: dict[int, list[int]] = {}
    same_text: dict[str, list[int]] = {}
    for j, ref in enumerate(corpus):
        by_article.setdefault(ref.article, []).append(j)
        same_text.setdefault(ref.text, []).append(j)

    answers = []
    for a in chosen:
        own = by_article[a]
        answers.append(own[int(rng.integers(0, len(own)))])
    excluded = [sorted(set(by_article[a]) | set(same_text[corpus[answer].text])) for a, answer in zip(chosen, answers)]
    if any(len(corpus) - len(e) < n_negatives for e in excluded):
        raise ValueError(f"{len(corpus)} non-first sections leave fewer than {n_negatives} negatives for a query")

    index = BM25Index([ref.text for ref in corpus], show_progress=show_progress)
    negatives, _ = index.top_k([articles[a].sections[0].text for a in chosen], n_negatives, excluded=excluded,
                               show_progress=show_progress)

    docs: dict[str, str] = {}
    queries: list[RankingQuery] = []
    for q, (a, answer, negative_row) in enumerate(tqdm(list(zip(chosen, answers, negatives)), desc="RR queries",
                                                       disable=not show_progress)):
        candidates = [f"R{j}" for j in negative_row]
        position = int(rng.integers(0, n_negatives + 1))
        candidates.insert(position, f"R{answer}")
        queries.append(RankingQuery(f"L{q}", candidates, position))
        docs[f"L{q}"] = articles[a].sections[0].text
    for j in sorted({int(c[1:]) for query in queries for c in query.candidates}):
        docs[f"R{j}"] = corpus[j].text
    task = RankingTask(docs, queries)
    task.validate()
    counts.update(retrieval_sections=len(corpus), queries=len(queries), documents=len(docs))
    check_minimum("RR queries", len(queries), min_queries, source, counts["warnings"])
    log.info("passage reranking: %d queries from %d eligible articles, corpus of %d sections",
             len(queries), len(eligible), len(corpus))
    return task
