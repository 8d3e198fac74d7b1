"""RR (NUGGET §6.1, Appendix A): WikiText articles/sections and the reranking task built from them."""

from pathlib import Path

import pytest

from multivec.data.wikitext import parse_wikitext
from multivec.io import MalformedInputError
from multivec.tasks.passage_reranking import build_passage_reranking_task, eligible_articles, non_first_sections
from multivec.tasks.ranking_task import RankingTask

FIXTURE = Path(__file__).parent / "fixtures" / "wikitext_sample.txt"

HAND_MADE = """ 
 = First Article = 
 
 Intro paragraph one . 
 Intro paragraph two . 
 
 = = History = = 
 
 Old times . 
 
 = = = Early history = = = 
 
 Very old times . 
 = National record 
 
 = = Empty = = 
 
 = = Legacy = = 
 
 Still remembered . 
 
 = Second Article = 
 
 Only an introduction . 
"""


def test_parse_wikitext_sections_subsections_and_single_section_articles(tmp_path):
    path = tmp_path / "wiki.tokens"
    path.write_text(HAND_MADE, encoding="utf-8")
    articles = parse_wikitext(path)
    assert [a.title for a in articles] == ["First Article", "Second Article"]
    first = articles[0]
    assert [s.heading for s in first.sections] == ["", "History", "Legacy"]  # "Empty" has no text
    assert first.sections[0].text == "Intro paragraph one .\nIntro paragraph two ."
    # the subsection and a line that only looks like a heading stay in their section
    assert first.sections[1].text == "Old times .\nVery old times .\n= National record"
    assert [s.heading for s in articles[1].sections] == [""]
    assert eligible_articles(articles) == [0]


def test_parse_wikitext_refuses_text_before_the_first_title(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text(" \n stray text \n = Title = \n", encoding="utf-8")
    with pytest.raises(MalformedInputError, match="bad.txt:2"):
        parse_wikitext(path)


def test_parse_wikitext_fixture_structure():
    articles = parse_wikitext(FIXTURE)
    assert len(articles) == 8
    assert articles[0].title == "Homarus gammarus"
    assert [s.heading for s in articles[0].sections][:3] == ["", "Description", "Life cycle"]
    assert articles[4].title == "Meridian , Mississippi" and len(articles[4].sections) == 12


def check_task(task, articles):
    corpus = non_first_sections(articles)
    first_sections = {a.sections[0].text: k for k, a in enumerate(articles)}
    positions = []
    for query in task.queries:
        assert query.source.startswith("L") and query.source in task.documents
        query_article = first_sections[task.documents[query.source]]  # the query is an article's first section
        assert len(query.candidates) == 20 and len(set(query.candidates)) == 20
        sections = [corpus[int(c[1:])] for c in query.candidates]
        answer = sections[query.answer]
        assert answer.article == query_article and answer.section >= 1
        assert task.documents[query.answer_id] == answer.text
        for k, section in enumerate(sections):
            if k != query.answer:
                assert section.article != query_article and section.section >= 1
                assert section.text != answer.text
        positions.append(query.answer)
    return positions


def test_builder_on_fixture_and_determinism(tmp_path):
    articles = parse_wikitext(FIXTURE)
    task = build_passage_reranking_task(articles, seed=0, show_progress=False)
    assert task.n_queries == 8
    check_task(task, articles)
    again = build_passage_reranking_task(articles, seed=0, show_progress=False)
    other = build_passage_reranking_task(articles, seed=1, show_progress=False)
    assert task.queries == again.queries and task.queries != other.queries
    sampled = build_passage_reranking_task(articles, n_queries=3, seed=0, show_progress=False)
    assert sampled.n_queries == 3
    task.save(tmp_path / "rr")
    assert RankingTask.load(tmp_path / "rr").queries == task.queries


def test_builder_on_wikitext2_valid_and_test(mirror):
    articles = parse_wikitext(mirror / "wikitext-2/valid.txt") + parse_wikitext(mirror / "wikitext-2/test.txt")
    task = build_passage_reranking_task(articles, seed=0, show_progress=False)
    assert task.n_queries == 121  # 60 + 61 articles with two or more sections
    positions = check_task(task, articles)
    assert len(set(positions)) > 10  # the answer's position is shuffled
