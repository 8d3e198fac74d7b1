"""Paragraph readers on the mirror and gensim's data; sentence splitters."""

import logging

import pytest

from multivec.data.corpora import (ENWIKI_TEST_DUMP, MalformedInputError, Paragraph, debian_reference_paragraphs,
                                   detokenize_wikitext, english_sentence_splitter, enwiki_dump_paragraphs,
                                   join_chinese, read_debian_reference_pairs, read_paragraphs,
                                   split_chinese_sentences, wikitext_paragraphs)
from multivec.data.download import gensim_test_file


def test_detokenize_wikitext():
    text = " The red @-@ tipped claws , 3 @.@ 1 – 3 @.@ 3 in ( 24 in ) of H. gammarus do n't vary . "
    assert detokenize_wikitext(text) == "The red-tipped claws, 3.1 – 3.3 in (24 in) of H. gammarus don't vary."
    assert detokenize_wikitext("a <unk> costs $ 1 @,@ 000 ; 50 %") == "a <unk> costs $1,000; 50%"


def test_wikitext_paragraphs(mirror):
    paragraphs = list(read_paragraphs("wikitext2", mirror / "wikitext-2" / "valid.txt"))
    assert len(paragraphs) > 1000
    assert all(p.text and p.text == p.text.strip() for p in paragraphs)
    assert all(" @-@ " not in p.text and not p.text.startswith("=") for p in paragraphs)
    first = paragraphs[0]
    assert (first.corpus, first.doc, first.section, first.index) == ("wikitext2-valid", "Homarus gammarus", "", 0)
    assert any(p.section == "Description" for p in paragraphs if p.doc == "Homarus gammarus")
    assert len({p.doc for p in paragraphs}) > 50
    raw = list(wikitext_paragraphs(mirror / "wikitext-2" / "valid.txt", detokenize=False))
    assert len(raw) == len(paragraphs) and " @-@ " in " ".join(p.text for p in raw)


def test_enwiki_dump_paragraphs(caplog):
    with caplog.at_level(logging.INFO, logger="multivec.data.corpora"):
        paragraphs = list(enwiki_dump_paragraphs(gensim_test_file(ENWIKI_TEST_DUMP)))
    assert len(paragraphs) > 3000
    assert all(len(p.text.split()) >= 8 for p in paragraphs)
    assert not any("'''" in p.text or "''" in p.text or p.text.startswith(("*", "|", "{")) for p in paragraphs)
    assert not any(p.section.lower() in ("references", "external links") for p in paragraphs)
    titles = {p.doc for p in paragraphs}
    assert "Anarchism" in titles and "AccessibleComputing" not in titles  # the latter is a redirect
    assert "skipped 99 redirects" in caplog.text


def test_debian_reference_pairs(mirror):
    pairs = read_debian_reference_pairs(mirror / "debian-reference" / "pairs.jsonl")
    assert len(pairs) == 2616
    assert pairs[0].doc == "pr01" and pairs[0].en == "Table of Contents" and pairs[0].zh == "目录"
    for a, b in zip(pairs, pairs[1:]):
        assert a.doc != b.doc or a.i < b.i
    paragraphs = list(debian_reference_paragraphs(mirror / "debian-reference" / "pairs.jsonl"))
    assert len(paragraphs) == 2616 and all(p.text for p in paragraphs)


def test_debian_reference_malformed_lines(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"doc": "a", "i": 0, "en": "x", "zh": "y"}\n{"doc": "a", "i": 1, "en": "x"}\n', encoding="utf-8")
    with pytest.raises(MalformedInputError, match=r"pairs\.jsonl:2: missing field\(s\) zh"):
        read_debian_reference_pairs(path)
    path.write_text('{"doc": "a", "i": 0, "en": "  ", "zh": "y"}\n', encoding="utf-8")
    with pytest.raises(MalformedInputError, match=r"pairs\.jsonl:1: empty en side"):
        read_debian_reference_pairs(path)
    path.write_text('{"doc": "a", "i": 0, "en": "x", "zh": "y"}\n{"doc": "a", "i": 0, "en": "x", "zh": "y"}\n')
    with pytest.raises(MalformedInputError, match=r"pairs\.jsonl:2: duplicate pair 'a#0' \(first on line 1\)"):
        read_debian_reference_pairs(path)


def test_english_sentence_splitter_with_mirror_punkt(mirror):
    split = english_sentence_splitter(mirror)
    text = "Mr. Smith went to Washington. He arrived at 5 p.m. on Monday! Did he stay? Yes."
    sentences = split(text)
    assert sentences[0] == "Mr. Smith went to Washington."
    assert sentences[-2:] == ["Did he stay?", "Yes."]
    assert " ".join(sentences) == text


def test_chinese_sentences_and_joining():
    assert split_chinese_sentences("你好。我是“学生。”他说！还有吗？没有") == ["你好。", "我是“学生。”", "他说！", "还有吗？", "没有"]
    assert split_chinese_sentences("") == []
    assert join_chinese(["第一句。", "第二句。"]) == "第一句。第二句。"
    assert join_chinese(["运行 ls", "-l 命令"]) == "运行 ls -l 命令"


def test_unknown_paragraph_corpus():
    with pytest.raises(ValueError, match="known: wikitext2, gensim_enwiki"):
        read_paragraphs("wikitext9", "x")


def test_paragraph_is_hashable_with_provenance():
    p = Paragraph("text", "c", "d", "s", 3)
    assert {p: 1}[p] == 1 and p.sentences is None


def test_the_real_corpora_pass_the_language_check_without_warnings(mirror, caplog):
    """The language check (multivec.data.language) must not flag the mirror's real English and Chinese text."""
    from multivec.data.language import ENGLISH_FUNCTION_WORDS, MIN_FUNCTION_WORD_SHARE, LanguageCheck
    from multivec.data.wikitext import parse_wikitext
    from multivec.tasks.ranking_task import RankingTask

    with caplog.at_level(logging.WARNING, logger="multivec.data.language"):
        assert len(read_debian_reference_pairs(mirror / "debian-reference" / "pairs.jsonl")) == 2616
        for split in ("valid", "test"):
            assert len(parse_wikitext(mirror / "wikitext-2" / f"{split}.txt")) >= 60
        assert RankingTask.load(mirror / "nugget-data" / "paraphrase_identification" / "dev").n_queries == 1024
    flagged = [r.getMessage() for r in caplog.records if r.name == "multivec.data.language"]
    assert not flagged, flagged
    check = LanguageCheck("x", "en")
    for line in (mirror / "wikitext-2" / "valid.txt").read_text(encoding="utf-8").splitlines():
        check.add(line)
    assert check.function_words / check.words > 2 * MIN_FUNCTION_WORD_SHARE and "the" in ENGLISH_FUNCTION_WORDS
