"""Bad data never passes silently: every reader and builder either raises a clear error (naming
file and line where there is one) or skips with a count that is logged as a WARNING.

``test_malformed_data``: each case writes a malformed input into a fresh folder, runs the reader
or builder on it, and checks the message. Then one parametrised test per family of damage
(malformed line, missing key, wrong type, bad encoding, unknown id, duplicate id, wrong language,
count mismatch, truncated archive), each over every reader it applies to.
"""

import bz2
import gzip
import io
import json
import logging
import re
import tarfile
import zipfile

import pytest

from multivec.data.archives import extract_member
from multivec.data.corpora import Paragraph, enwiki_dump_paragraphs, read_debian_reference_pairs
from multivec.data.documents import PackingStats, build_autoencoding_corpus
from multivec.data.overlap import sentence_pairs_documents, text_jsonl_documents, training_jsonl_documents
from multivec.data.translation_corpus import (TranslationStats, align_wmt_sgm, build_translation_corpus_debian,
                                              build_translation_corpus_wmt, parse_wmt_sgm, read_news_commentary_tsv,
                                              read_wmt19_dev)
from multivec.data.wikitext import parse_wikitext
from multivec.distill.data.documents import lee_documents, polarity_documents, read_documents, read_lee_similarities
from multivec.distill.data.imdb import read_labels
from multivec.io import EmptyOutputError, MalformedInputError, read_docs_tsv, read_json
from multivec.nugget.lm_data import read_streams, training_streams
from multivec.tasks.paraphrase_identification import build_paraphrase_identification_task_from_file
from multivec.tasks.passage_reranking import build_passage_reranking_task
from multivec.tasks.ranking_task import RankingTask


class WhitespaceTokenizer:
    def __call__(self, texts, add_special_tokens=False):
        return {"input_ids": [t.split() for t in texts]}


def write(folder, name, text, binary=False):
    path = folder / name
    if binary:
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- ranking tasks (task.jsonl + docs.txt)

DOCS = "L0\tquery text\nR0\tanswer text\nR1\tother text\n"
GOOD_ROW = '{"source": "L0", "candidates": ["R0", "R1"], "answer": 0}'


def load_task(folder, task_text, docs_text=DOCS):
    write(folder, "docs.txt", docs_text)
    write(folder, "task.jsonl", task_text)
    return RankingTask.load(folder)


def task_row(**fields):
    row = json.loads(GOOD_ROW)
    row.update(fields)
    return json.dumps(row)


# ---------------------------------------------------------------- corpora

def debian(folder, text):
    path = write(folder, "pairs.jsonl", text)
    return build_translation_corpus_debian(path, WhitespaceTokenizer(), 64, dev_size=1, seed=0)


def pair(**fields):
    row = {"doc": "ch1", "i": 0, "en": "Hello there.", "zh": "你好。"}
    row.update(fields)
    return json.dumps(row, ensure_ascii=False)


def news_commentary(folder, text):
    path = folder / "nc.tsv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(text)
    return build_translation_corpus_wmt(path, folder / "dev.tgz", WhitespaceTokenizer(), 64, seed=0)


def news_commentary_misaligned(folder):
    path = write(folder, "nc.tsv", "A sentence.\t一句话。\nOnly English.\t\nAnother one.\t又一句。\n")
    stats = TranslationStats()
    docs = list(read_news_commentary_tsv(path, stats))
    assert stats.skipped_lines == 1 and [len(pairs) for _, pairs in docs] == [2]


def autoencoding_all_too_long(folder):
    paragraphs = [Paragraph("one two three four five six seven eight nine ten.", "c", "art")]
    return build_autoencoding_corpus([paragraphs], WhitespaceTokenizer(), 5, dev_size=1,
                                     split_sentences=lambda text: [text])


def autoencoding_below_minimum(folder):
    paragraphs = [Paragraph(f"Sentence number {i}.", "c", f"art{i}") for i in range(6)]
    stats = PackingStats()
    train, dev = build_autoencoding_corpus([paragraphs], WhitespaceTokenizer(), 5, dev_size=1, min_documents=10,
                                           split_sentences=lambda text: [text], stats=stats)
    assert len(train) + len(dev) == 6 and stats.warnings and "below the configured minimum of 10" in stats.warnings[0]


# ---------------------------------------------------------------- ParaBank (PI)

def parabank(folder, text, binary=False, **kwargs):
    path = write(folder, "parabank.tsv", text, binary)
    return build_paraphrase_identification_task_from_file(path, n_queries=4, window=64, max_tokens=8, seed=0,
                                                          show_progress=False, **kwargs)


def parabank_lines(n):
    return "".join(f"sentence {i} about topic {i % 7} .\tthe sentence {i} on subject {i % 7} .\n" for i in range(n))


def parabank_shrunk(folder):
    # the whole file gives 40+ documents; the last half was lost: fewer queries than configured
    lines = parabank_lines(240).splitlines(keepends=True)
    settings = dict(n_queries=40, window=64, max_tokens=8, seed=0, show_progress=False, min_queries=40)
    full_warnings, warnings = [], []
    full = build_paraphrase_identification_task_from_file(write(folder, "full.tsv", "".join(lines)),
                                                          warnings=full_warnings, **settings)
    half = build_paraphrase_identification_task_from_file(write(folder, "half.tsv", "".join(lines[:40])),
                                                          warnings=warnings, **settings)
    assert full.n_queries == 40 and not full_warnings
    assert half.n_queries < 40 and len(warnings) == 1


# ---------------------------------------------------------------- WikiText (RR)

def wikitext_text(n_articles):
    return "".join(f" = Article {a} = \n\n Intro of article {a} about thing {a} . \n\n"
                   f" = = History = = \n\n History of thing {a} and item {a % 5} . \n\n"
                   f" = = Legacy = = \n\n Legacy of thing {a} and object {a % 3} . \n\n" for a in range(n_articles))


def wikitext_shrunk(folder):
    full_path = write(folder, "wiki.valid.tokens", wikitext_text(30))
    counts = {}
    full = build_passage_reranking_task(parse_wikitext(full_path), seed=0, show_progress=False, counts=counts)
    half_path = write(folder, "half.tokens", "".join(wikitext_text(30).splitlines(keepends=True)[:len(
        wikitext_text(30).splitlines()) // 2]))
    half_counts = {}
    half = build_passage_reranking_task(parse_wikitext(half_path), seed=0, show_progress=False,
                                        min_queries=full.n_queries, source=str(half_path), counts=half_counts)
    assert full.n_queries == counts["queries"] == 30
    assert half.n_queries == half_counts["queries"] == 15 and len(half_counts["warnings"]) == 1


def rr_from(folder, text):
    path = write(folder, "wiki.tokens", text)
    return build_passage_reranking_task(parse_wikitext(path), seed=0, show_progress=False, source=str(path))


# ---------------------------------------------------------------- the cases

CASES = [
    # task.jsonl
    pytest.param(lambda d: load_task(d, GOOD_ROW + "\n" + '{"source": "L0", "candidates": ["R0"'),
                 MalformedInputError, r"task\.jsonl:2: JSONL line does not parse", id="task-truncated-json-line"),
    pytest.param(lambda d: load_task(d, task_row(answer=True)),
                 MalformedInputError, r"task\.jsonl:1: answer must be an integer index, got True", id="task-bool-answer"),
    pytest.param(lambda d: load_task(d, task_row(answer=2)),
                 MalformedInputError, r"task\.jsonl:1: answer 2 is not an index into 2 candidates",
                 id="task-answer-out-of-range"),
    pytest.param(lambda d: load_task(d, task_row(answer="0")),
                 MalformedInputError, r"task\.jsonl:1: answer must be an integer index, got '0'", id="task-string-answer"),
    pytest.param(lambda d: load_task(d, '{"source": "L0", "answer": 0}'),
                 MalformedInputError, r"task\.jsonl:1: missing field\(s\) \['candidates'\]", id="task-missing-field"),
    pytest.param(lambda d: load_task(d, task_row(source=None)),
                 MalformedInputError, r"task\.jsonl:1: source must be a document id string, got None",
                 id="task-null-source"),
    pytest.param(lambda d: load_task(d, task_row(candidates="R0 R1")),
                 MalformedInputError, r"task\.jsonl:1: candidates must be a list of document id strings",
                 id="task-candidates-not-a-list"),
    pytest.param(lambda d: load_task(d, task_row(candidates=["R0", None])),
                 MalformedInputError, r"task\.jsonl:1: candidates must be a list of document id strings",
                 id="task-null-candidate"),
    pytest.param(lambda d: load_task(d, task_row(candidates=["R0", "R7"])),
                 MalformedInputError, r"task\.jsonl:1: candidate 'R7' is not in docs\.txt", id="task-unknown-id"),
    pytest.param(lambda d: load_task(d, GOOD_ROW + "\n" + GOOD_ROW + "\n"),
                 MalformedInputError, r"task\.jsonl:2: duplicate query 'L0' \(first on line 1\)", id="task-duplicate-query"),
    pytest.param(lambda d: load_task(d, "[1, 2]\n"),
                 MalformedInputError, r"task\.jsonl:1: expected a JSON object, got list", id="task-row-not-an-object"),
    pytest.param(lambda d: load_task(d, "\n"),
                 MalformedInputError, r"task\.jsonl: no queries", id="task-empty-file"),
    pytest.param(lambda d: load_task(d, GOOD_ROW).first(5),
                 ValueError, r"asked for 5 queries but the task has 1", id="task-fewer-queries-than-configured"),
    # docs.txt
    pytest.param(lambda d: load_task(d, GOOD_ROW, "L0\tquery text\nR0 answer text without a tab\n"),
                 MalformedInputError, r"docs\.txt:2: expected 'id<TAB>text'", id="docs-line-without-tab"),
    pytest.param(lambda d: load_task(d, GOOD_ROW, DOCS + "R1\tagain\n"),
                 MalformedInputError, r"docs\.txt:4: duplicate document id 'R1'", id="docs-duplicate-id"),
    pytest.param(lambda d: read_docs_tsv(write(d, "docs.txt", b"L0\tok\nR0\t\xff\xfe\n", binary=True)),
                 MalformedInputError, r"docs\.txt:2: not valid UTF-8", id="docs-not-utf8"),
    # Debian Reference pairs.jsonl (MT, demo)
    pytest.param(lambda d: debian(d, pair(en=None)),
                 MalformedInputError, r"pairs\.jsonl:1: field 'en' must be a string, got None", id="pairs-null-text"),
    pytest.param(lambda d: debian(d, pair(i=True)),
                 MalformedInputError, r"pairs\.jsonl:1: field 'i' must be an integer, got True", id="pairs-bool-index"),
    pytest.param(lambda d: debian(d, '{"doc": "ch1", "i": 0, "en": "Hello."}'),
                 MalformedInputError, r"pairs\.jsonl:1: missing field\(s\) zh", id="pairs-missing-field"),
    pytest.param(lambda d: debian(d, pair() + "\n" + pair() + "\n"),
                 MalformedInputError, r"pairs\.jsonl:2: duplicate pair 'ch1#0' \(first on line 1\)", id="pairs-duplicate-id"),
    pytest.param(lambda d: debian(d, pair() + "\n" + pair(i=1)[:25] + "\n"),
                 MalformedInputError, r"pairs\.jsonl:2: JSONL line does not parse", id="pairs-truncated-json-line"),
    pytest.param(lambda d: debian(d, ""),
                 EmptyOutputError, r"pairs\.jsonl: no sentence pairs \(empty file\)", id="pairs-empty-file"),
    pytest.param(lambda d: debian(d, pair(zh="   ")),
                 MalformedInputError, r"pairs\.jsonl:1: empty zh side of pair ch1#0", id="pairs-empty-side"),
    # News Commentary (MT, paper) and WMT SGML
    pytest.param(lambda d: news_commentary(d, "\n\n"),
                 EmptyOutputError, r"nc\.tsv\.gz: no training documents built \(0\)", id="news-commentary-empty-file"),
    pytest.param(news_commentary_misaligned, None, r"nc\.tsv: skipped 1 misaligned lines .* e\.g\. lines 2",
                 id="news-commentary-misaligned-line-counted"),
    pytest.param(lambda d: parse_wmt_sgm('<refset>\n<seg id="1">x</seg>\n', "newstest.sgm"),
                 MalformedInputError, r"newstest\.sgm:2: <seg> outside any <doc>", id="sgm-seg-outside-doc"),
    # autoencoding corpus
    pytest.param(autoencoding_all_too_long, EmptyOutputError, r"read from c: no autoencoding documents built \(0\)",
                 id="autoencoding-zero-documents"),
    pytest.param(autoencoding_below_minimum, None,
                 r"only 6 autoencoding documents, below the configured minimum of 10", id="autoencoding-below-minimum"),
    # ParaBank (PI)
    pytest.param(lambda d: parabank(d, parabank_lines(30) + "a reference without paraphrase\n"),
                 MalformedInputError, r"parabank\.tsv:31: expected \[score<TAB>\]reference<TAB>paraphrase",
                 id="parabank-missing-paraphrase"),
    pytest.param(lambda d: parabank(d, parabank_lines(3) + "ref .\t  \n"),
                 MalformedInputError, r"parabank\.tsv:4: empty reference or paraphrase", id="parabank-empty-side"),
    pytest.param(lambda d: parabank(d, parabank_lines(3).encode() + b"r\xff .\tp .\n", binary=True),
                 MalformedInputError, r"parabank\.tsv:4: not valid UTF-8", id="parabank-not-utf8"),
    pytest.param(lambda d: parabank(d, "\n"),
                 EmptyOutputError, r"parabank\.tsv: no ParaBank sentence pairs \(empty file\)", id="parabank-empty-file"),
    pytest.param(parabank_shrunk, None, r"half\.tsv: only \d+ PI queries, below the configured minimum of 40",
                 id="parabank-shrunk-source"),
    # WikiText (RR)
    pytest.param(wikitext_shrunk, None, r"half\.tokens: only 15 RR queries, below the configured minimum of 30",
                 id="wikitext-shrunk-source"),
    pytest.param(lambda d: rr_from(d, " Some text before any title . \n = Title = \n"),
                 MalformedInputError, r"wiki\.tokens:1: text before the first article title", id="wikitext-text-before-title"),
    pytest.param(lambda d: rr_from(d, "\n \n"),
                 EmptyOutputError, r"wiki\.tokens: no WikiText articles built \(0\)", id="wikitext-empty-file"),
    pytest.param(lambda d: rr_from(d, " = Only = \n\n intro . \n\n = Other = \n\n intro two . \n"),
                 EmptyOutputError, r"wiki\.tokens: no article has two or more sections", id="wikitext-no-sections"),
]


@pytest.mark.parametrize("run, error, message", CASES)
def test_malformed_data(tmp_path, caplog, run, error, message):
    if error is not None:
        with pytest.raises(error, match=message):
            run(tmp_path)
        return
    # a documented skip or shortfall: the builder goes on, counts it (asserted inside the case)
    # and says so in a WARNING
    with caplog.at_level(logging.WARNING):
        run(tmp_path)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(re.search(message, w) for w in warnings), warnings


def test_there_are_enough_cases():
    assert len(CASES) >= 21
    families = [MALFORMED_LINE, MISSING_KEY, WRONG_TYPE, BAD_ENCODING, UNKNOWN_ID, DUPLICATE_ID, WRONG_LANGUAGE,
                COUNT_MISMATCH, TRUNCATED]
    assert all(len(family) >= 5 for family in families)


# ================================================================ one test per family of malformed input
#
# Every reader of an external file, fed the same kind of damage, stops at the reading step with a
# ``MalformedInputError`` whose message names the file and the line (for archives: the member) and says
# what was expected. Each case is (reader on a damaged file in a fresh folder, regex the message must
# match from its start after the folder, i.e. ``<file>:<line>: <what>``).

def rows(*items):
    """JSONL text: dicts are dumped, strings kept as written (a damaged line)."""
    return "".join((json.dumps(i, ensure_ascii=False) if isinstance(i, dict) else i) + "\n" for i in items)


def lines_of(reader, name, text, binary=False):
    """A reader (path -> anything, consumed if it is a generator) applied to ``name`` holding ``text``."""
    def run(folder):
        result = reader(write(folder, name, text, binary))
        return list(result) if hasattr(result, "__next__") else result
    return run


def overlap_reader(reader):
    return lambda path: reader([path])


DOC = {"id": "d1", "text": "some text"}
CORPUS_ROW = {"id": "src/0000-a/000", "source": "a text", "target": "a text"}
PAIR_ROW = {"doc": "ch1", "i": 0, "en": "Hello there.", "zh": "你好。"}
LEE_ROW = "\t".join(["0.5"] * 50)
SPAIR = {"pair_id": "p0", "a": {"id": "s1", "sentence": "One."}, "b": {"id": "s2", "sentence": "Two."}}


def sgm(kind, docs, seg_ids=None):
    """A WMT SGML file: ``docs`` is [(docid, [segment text, ...])]."""
    out = [f'<{kind} setid="newsdev2017" srclang="en" trglang="zh">']
    for docid, segs in docs:
        out.append(f'<doc sysid="ref" docid="{docid}" genre="news">')
        ids = seg_ids or range(1, len(segs) + 1)
        out.extend(f'<seg id="{i}">{text}</seg>' for i, text in zip(ids, segs))
        out.append("</doc>")
    return "\n".join(out + [f"</{kind}>"]) + "\n"


def aligned(source_docs, reference_docs, reference_ids=None):
    return lambda folder: align_wmt_sgm(sgm("srcset", source_docs), sgm("refset", reference_docs, reference_ids),
                                        "src.en.sgm", "ref.zh.sgm")


def task_folder(task_text, docs_text=DOCS):
    return lambda folder: load_task(folder, task_text, docs_text)


def error_message(run, folder):
    with pytest.raises(MalformedInputError) as info:
        run(folder)
    return str(info.value)


def assert_names_file_and_line(tmp_path, run, expected):
    """The message, with the test's folder left out, starts with ``expected`` (``<file>:<line>: <what>``)."""
    shown = error_message(run, tmp_path).replace(str(tmp_path) + "/", "")
    assert re.match(expected, shown), shown


MALFORMED_LINE = [
    pytest.param(lines_of(read_debian_reference_pairs, "pairs.jsonl", rows(PAIR_ROW, '{"doc": "ch1", "i": 1, "en"')),
                 r"pairs\.jsonl:2: JSONL line does not parse", id="debian-pairs"),
    pytest.param(lines_of(overlap_reader(training_jsonl_documents), "train.jsonl", rows(CORPUS_ROW, "[1, 2]")),
                 r"train\.jsonl:2: expected a JSON object, got list", id="training-corpus"),
    pytest.param(lines_of(read_documents, "docs.jsonl", rows(DOC, "", '{"id": "d2",}')),
                 r"docs\.jsonl:3: JSONL line does not parse", id="distill-documents"),
    pytest.param(lines_of(read_streams, "streams.jsonl", rows('"just a string"')),
                 r"streams\.jsonl:1: expected a JSON object, got str", id="lm-streams"),
    pytest.param(lines_of(read_docs_tsv, "docs.txt", "a\tfine\nno tab on this line\n"),
                 r"docs\.txt:2: expected 'id<TAB>text'", id="docs-txt"),
    pytest.param(lines_of(read_docs_tsv, "docs.txt", "a\tfine\n\tno id\n"),
                 r"docs\.txt:2: empty document id", id="docs-txt-empty-id"),
    pytest.param(lambda d: parse_wmt_sgm('<refset>\n<doc docid="d1">\n<seg id="1">open but never closed\n', "x.sgm"),
                 r"x\.sgm:3: unparsable <seg> line", id="wmt-sgml"),
    pytest.param(lines_of(parse_wikitext, "wiki.tokens", " a paragraph . \n = Title = \n"),
                 r"wiki\.tokens:1: text before the first article title", id="wikitext"),
    pytest.param(lines_of(read_lee_similarities, "similarities.txt", LEE_ROW + "\n" + "0.5 x 0.5\n"),
                 r"similarities\.txt:2: expected tab-separated numbers", id="lee-ratings"),
    pytest.param(lines_of(polarity_documents, "polarity.cor", "__label__pos good .\nno label here\n"),
                 r"polarity\.cor:2: expected '__label__neg\|__label__pos TEXT'", id="polarity"),
    pytest.param(lines_of(read_json, "config.json", '{\n  "a": 1,\n  "b": \n}\n'),
                 r"config\.json:4: JSON does not parse: Expecting value \(column 1\)", id="json"),
]

MISSING_KEY = [
    pytest.param(lines_of(read_debian_reference_pairs, "pairs.jsonl", rows(PAIR_ROW, {"doc": "ch1", "i": 1, "en": "x"})),
                 r"pairs\.jsonl:2: missing field\(s\) zh", id="debian-pairs"),
    pytest.param(task_folder(rows({"source": "L0", "answer": 0})),
                 r"task\.jsonl:1: missing field\(s\) \['candidates'\]", id="ranking-task"),
    pytest.param(lines_of(overlap_reader(training_jsonl_documents), "train.jsonl", rows({"id": "a", "source": "x"})),
                 r"train\.jsonl:1: missing field\(s\) target", id="training-corpus"),
    pytest.param(lines_of(overlap_reader(text_jsonl_documents), "docs.jsonl", rows(DOC, {"id": "d2"})),
                 r"docs\.jsonl:2: missing field\(s\) text", id="text-documents"),
    pytest.param(lines_of(overlap_reader(sentence_pairs_documents), "pairs.jsonl",
                          rows(SPAIR, {"pair_id": "p1", "a": {"id": "s3", "sentence": "Three."}})),
                 r"pairs\.jsonl:2: missing field\(s\) b", id="sentence-pairs"),
    pytest.param(lines_of(read_documents, "docs.jsonl", rows({"text": "no id"})),
                 r"docs\.jsonl:1: missing field\(s\) id", id="distill-documents"),
    pytest.param(lines_of(training_streams, "train.jsonl", rows({"id": "src/a/000"})),
                 r"train\.jsonl:1: missing field\(s\) source", id="lm-training-rows"),
    pytest.param(lines_of(read_streams, "streams.jsonl", rows({"id": "x", "text": "t"}, {"id": "y"})),
                 r"streams\.jsonl:2: missing field\(s\) text", id="lm-streams"),
    pytest.param(lines_of(read_labels, "eval_imdb_train.jsonl", rows({"id": "r1", "text": "good"})),
                 r"eval_imdb_train\.jsonl:1: each row needs a string 'id' and a 'label' 0 or 1", id="imdb-labels"),
]

WRONG_TYPE = [
    pytest.param(lines_of(read_debian_reference_pairs, "pairs.jsonl", rows({**PAIR_ROW, "i": "0"})),
                 r"pairs\.jsonl:1: field 'i' must be an integer, got '0'", id="debian-pairs-index"),
    pytest.param(task_folder(rows({"source": "L0", "candidates": ["R0", "R1"], "answer": 1.0})),
                 r"task\.jsonl:1: answer must be an integer index, got 1\.0", id="ranking-task-answer"),
    pytest.param(lines_of(overlap_reader(training_jsonl_documents), "train.jsonl", rows({**CORPUS_ROW, "source": None})),
                 r"train\.jsonl:1: field 'source' must be a string, got None", id="training-corpus-null"),
    pytest.param(lines_of(overlap_reader(text_jsonl_documents), "docs.jsonl", rows({"id": 7, "text": "t"})),
                 r"docs\.jsonl:1: field 'id' must be a string, got 7", id="text-documents-number-id"),
    pytest.param(lines_of(overlap_reader(sentence_pairs_documents), "pairs.jsonl",
                          rows({**SPAIR, "b": {"id": "s2", "sentence": None}})),
                 r"pairs\.jsonl:1: side 'b' is not \{id, sentence\} with string values", id="sentence-pairs"),
    pytest.param(lines_of(read_documents, "docs.jsonl", rows({"id": "d", "text": ["a", "list"]})),
                 r"docs\.jsonl:1: field 'text' must be a string, got \['a', 'list'\]", id="distill-documents"),
    pytest.param(lines_of(read_labels, "eval_imdb_test.jsonl", rows({"id": "r1", "label": 1}, {"id": "r2", "label": True})),
                 r"eval_imdb_test\.jsonl:2: each row needs .* got id 'r2', label True", id="imdb-bool-label"),
    pytest.param(lines_of(training_streams, "train.jsonl", rows({"id": "src/a/000", "source": 5})),
                 r"train\.jsonl:1: field 'source' must be a non-empty string, got 5", id="lm-training-rows"),
    pytest.param(lines_of(read_lee_similarities, "similarities.txt", LEE_ROW + "\n" + "\t".join(["nan"] * 50)),
                 r"similarities\.txt:2: ratings must lie in \[0, 1\], found nan", id="lee-ratings-nan"),
]

BAD_ENCODING = [
    pytest.param(lines_of(read_docs_tsv, "docs.txt", b"a\tok\nb\tcaf\xe9\n", binary=True),
                 r"docs\.txt:2: not valid UTF-8", id="docs-txt"),
    pytest.param(lines_of(read_debian_reference_pairs, "pairs.jsonl",
                          rows(PAIR_ROW).encode() + b'{"doc": "\xff"}\n', binary=True),
                 r"pairs\.jsonl:2: not valid UTF-8", id="debian-pairs"),
    pytest.param(lines_of(read_news_commentary_tsv, "nc.tsv", "A.\t一。\n".encode() + b"B\xff.\t\xe4\n", binary=True),
                 r"nc\.tsv:2: not valid UTF-8", id="news-commentary"),
    pytest.param(lines_of(parse_wikitext, "wiki.tokens", b" = T = \n\n caf\xe9 \n", binary=True),
                 r"wiki\.tokens:3: not valid UTF-8", id="wikitext"),
    pytest.param(lines_of(read_documents, "docs.jsonl", b'{"id": "a", "text": "\xc3("}\n', binary=True),
                 r"docs\.jsonl:1: not valid UTF-8", id="distill-documents"),
    pytest.param(lines_of(read_lee_similarities, "similarities.txt", b"\xff\xfe0.5\n", binary=True),
                 r"similarities\.txt:1: not valid UTF-8", id="lee-ratings"),
    pytest.param(lines_of(read_json, "config.json", b'{"a": "\xff"}', binary=True),
                 r"config\.json: not valid UTF-8", id="json"),
]

UNKNOWN_ID = [
    pytest.param(task_folder(task_row(candidates=["R0", "R9"])),
                 r"task\.jsonl:1: candidate 'R9' is not in docs\.txt", id="ranking-candidate"),
    pytest.param(task_folder(task_row(source="L9")),
                 r"task\.jsonl:1: source 'L9' is not in docs\.txt", id="ranking-source"),
    pytest.param(task_folder(task_row(candidates=["R0", "L0"])),
                 r"task\.jsonl:1: source 'L0' is one of its own candidates", id="ranking-source-is-candidate"),
    pytest.param(aligned([("d1", ["One."]), ("d2", ["Two."])], [("d1", ["一。"])]),
                 r"src\.en\.sgm:5: document 'd2' is not in ref\.zh\.sgm", id="wmt-reference-lacks-document"),
    pytest.param(aligned([("d1", ["One."])], [("d1", ["一。"]), ("d9", ["九。"])]),
                 r"ref\.zh\.sgm:5: document 'd9' is not in src\.en\.sgm", id="wmt-reference-extra-document"),
    pytest.param(aligned([("d1", ["One.", "Two."])], [("d1", ["一。", "二。"])], reference_ids=[1, 7]),
                 r"ref\.zh\.sgm:2: document 'd1' has 2 segments, 2 in src\.en\.sgm; missing ids \['2'\], "
                 r"extra ids \['7'\]", id="wmt-segment-ids-differ"),
]

DUPLICATE_ID = [
    pytest.param(lines_of(read_docs_tsv, "docs.txt", "a\tone\nb\ttwo\na\tthree\n"),
                 r"docs\.txt:3: duplicate document id 'a' \(first on line 1\)", id="docs-txt"),
    pytest.param(task_folder(GOOD_ROW + "\n" + GOOD_ROW + "\n"),
                 r"task\.jsonl:2: duplicate query 'L0' \(first on line 1\)", id="ranking-query"),
    pytest.param(task_folder(task_row(candidates=["R0", "R0"])),
                 r"task\.jsonl:1: duplicate candidate\(s\) \['R0'\]", id="ranking-candidate"),
    pytest.param(lines_of(read_debian_reference_pairs, "pairs.jsonl", rows(PAIR_ROW, {**PAIR_ROW, "i": 1}, PAIR_ROW)),
                 r"pairs\.jsonl:3: duplicate pair 'ch1#0' \(first on line 1\)", id="debian-pairs"),
    pytest.param(lambda d: parse_wmt_sgm(sgm("refset", [("d1", ["一。"]), ("d1", ["二。"])]), "ref.sgm"),
                 r"ref\.sgm:5: duplicate document id 'd1' \(first on line 2\)", id="wmt-document"),
    pytest.param(lambda d: parse_wmt_sgm(sgm("refset", [("d1", ["一。", "二。"])], seg_ids=[1, 1]), "ref.sgm"),
                 r"ref\.sgm:4: duplicate segment id in document 'd1', '1' \(first on line 3\)", id="wmt-segment"),
    pytest.param(lines_of(overlap_reader(training_jsonl_documents), "train.jsonl", rows(CORPUS_ROW, CORPUS_ROW)),
                 r"train\.jsonl:2: duplicate id 'src/0000-a/000' \(first on line 1\)", id="training-corpus"),
    pytest.param(lines_of(overlap_reader(text_jsonl_documents), "docs.jsonl", rows(DOC, DOC)),
                 r"docs\.jsonl:2: duplicate id 'd1' \(first on line 1\)", id="text-documents"),
    pytest.param(lines_of(overlap_reader(sentence_pairs_documents), "pairs.jsonl",
                          rows(SPAIR, {**SPAIR, "pair_id": "p1", "a": {"id": "s1", "sentence": "Not one."}})),
                 r"pairs\.jsonl:2: sentence id 's1' names another sentence on .*pairs\.jsonl:1", id="sentence-pairs"),
    pytest.param(lines_of(read_documents, "docs.jsonl", rows(DOC, {"id": "d2", "text": "x"}, DOC)),
                 r"docs\.jsonl:3: duplicate id 'd1' \(first on line 1\)", id="distill-documents"),
    pytest.param(lines_of(read_labels, "eval_imdb_train.jsonl", rows({"id": "r", "label": 0}, {"id": "r", "label": 1})),
                 r"eval_imdb_train\.jsonl:2: duplicate review id 'r' \(first on line 1\)", id="imdb-labels"),
    pytest.param(lines_of(training_streams, "train.jsonl", rows({"id": "src/a/1", "source": "x"},
                                                                 {"id": "src/a/001", "source": "y"})),
                 r"train\.jsonl:2: chunk 1 of 'src/a' is defined twice", id="lm-training-chunk"),
    pytest.param(lines_of(read_streams, "streams.jsonl", rows({"id": "s", "text": "a"}, {"id": "s", "text": "b"})),
                 r"streams\.jsonl:2: duplicate stream id 's' \(first on line 1\)", id="lm-streams"),
]

GERMAN = "Die Katze sitzt auf der Matte und der Hund schläft im Garten, morgen wird es regnen."  # 15 words
ENGLISH_LINES = [f"Sentence {i} of the text is in English and it reads as such." for i in range(10)]

WRONG_LANGUAGE = [
    pytest.param(lines_of(read_debian_reference_pairs, "pairs.jsonl",
                          rows(*({**PAIR_ROW, "i": i, "zh": "Hello again."} for i in range(3)))),
                 r"pairs\.jsonl:1: zh is not Chinese: 3 of 3 zh texts are not Chinese", id="debian-zh-side-english"),
    pytest.param(lines_of(read_debian_reference_pairs, "pairs.jsonl",
                          rows(*({**PAIR_ROW, "i": i, "en": "你好。", "zh": "Hello."} for i in range(3)))),
                 r"pairs\.jsonl:1: en is not English", id="debian-columns-swapped"),
    pytest.param(lines_of(read_news_commentary_tsv, "nc.tsv", "".join(f"{i} 你好。\tHello {i}.\n" for i in range(4))),
                 r"nc\.tsv:1: en \(first column\) is not English", id="news-commentary-swapped"),
    pytest.param(lines_of(read_news_commentary_tsv, "nc.tsv", "".join(f"Hello {i}.\tHallo {i}.\n" for i in range(4))),
                 r"nc\.tsv:1: zh \(second column\) is not Chinese", id="news-commentary-en-de"),
    pytest.param(lambda d: parse_wmt_sgm(sgm("refset", [("d1", ["Hello.", "Again."])]), "ref.zh.sgm", "zh"),
                 r"ref\.zh\.sgm:3: segment is not Chinese", id="wmt-reference-english"),
    pytest.param(aligned([("d1", ["One.", "Two."])], [("d1", ["One.", "Two."])]),
                 r"ref\.zh\.sgm:3: segment is not Chinese", id="wmt-align-reference-english"),
    pytest.param(lines_of(parse_wikitext, "wiki.tokens", " = Titel = \n\n" + f" {GERMAN} \n" * 80),
                 r"wiki\.tokens: WikiText does not read as English: common English function words are \d",
                 id="wikitext-german"),
    pytest.param(task_folder(GOOD_ROW, f"L0\t{GERMAN * 30}\nR0\t{GERMAN * 30}\nR1\t{GERMAN * 30}\n"),
                 r"docs\.txt: documents does not read as English", id="ranking-docs-german"),
    pytest.param(lines_of(polarity_documents, "polarity.cor",
                          "".join(f"__label__{'pos' if i % 2 else 'neg'} {GERMAN}\n" for i in range(80))),
                 r"polarity\.cor: text does not read as English", id="polarity-german"),
]

COUNT_MISMATCH = [
    pytest.param(aligned([("d1", ["One.", "Two."])], [("d1", ["一。"])]),
                 r"ref\.zh\.sgm:2: document 'd1' has 1 segments, 2 in src\.en\.sgm; missing ids \['2'\]",
                 id="wmt-segments"),
    pytest.param(lines_of(read_lee_similarities, "similarities.txt", LEE_ROW + "\n" + "\t".join(["0.5"] * 49)),
                 r"similarities\.txt:2: expected 50 ratings, found 49", id="lee-ratings-row"),
    pytest.param(lines_of(read_lee_similarities, "similarities.txt", (LEE_ROW + "\n") * 49),
                 r"similarities\.txt: expected a 50x50 matrix, found 49 rows", id="lee-ratings-rows"),
    pytest.param(lines_of(lee_documents, "lee.cor", "".join(f"Document {i} of the corpus.\n" for i in range(49))),
                 r"lee\.cor: expected 50 Lee documents, found 49", id="lee-documents"),
    pytest.param(task_folder(GOOD_ROW + "\n" + json.dumps({"source": "R1", "candidates": ["R0"], "answer": 0})),
                 r"task\.jsonl:2: 1 candidates, but line 1 has 2", id="ranking-candidate-count"),
    pytest.param(lines_of(polarity_documents, "polarity.cor", "__label__pos good .\n__label__pos fine .\n"),
                 r"polarity\.cor: no sentence labelled __label__neg \(of 2\)", id="polarity-one-class"),
]


def truncated(data: bytes, keep: float = 0.5) -> bytes:
    return data[:int(len(data) * keep)]


def tgz_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


NOISE = bytes(range(256)) * 800  # incompressible enough that half an archive ends inside the member


def zip_with_bad_crc(folder):
    path = folder / "data.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("data/file.txt", NOISE)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte inside the stored member
    path.write_bytes(bytes(data))
    extract_member(path, "data/file.txt", folder / "out.txt")


def zip_cut_in_half(folder):
    path = folder / "data.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("data/file.txt", NOISE)
    path.write_bytes(truncated(path.read_bytes()))
    extract_member(path, "data/file.txt", folder / "out.txt")


def tgz_cut_in_half(folder):
    path = write(folder, "data.tgz", truncated(tgz_bytes({"data/file.txt": NOISE})), binary=True)
    extract_member(path, "data/file.txt", folder / "out.txt")


def dev_tgz(members, cut=False):
    def run(folder):
        data = tgz_bytes({name: text.encode("utf-8") if isinstance(text, str) else text
                          for name, text in members.items()})
        read_wmt19_dev(write(folder, "dev.tgz", truncated(data) if cut else data, binary=True))
    return run


DEV_MEMBERS = {"dev/newsdev2017-enzh-src.en.sgm": sgm("srcset", [("d1", ["One."])]) + "<!-- " + "x" * 20000 + " -->",
               "dev/newsdev2017-enzh-ref.zh.sgm": sgm("refset", [("d1", ["一。"])]),
               "dev/newstest2018-enzh-src.en.sgm": sgm("srcset", [("t1", ["Two."])]),
               "dev/newstest2018-enzh-ref.zh.sgm": sgm("refset", [("t1", ["二。"])])}


def news_commentary_gz_cut(folder):
    text = "".join(f"Sentence {i} of the news.\t新闻的第{i}句。\n" for i in range(3000))
    path = folder / "nc.tsv.gz"
    path.write_bytes(truncated(gzip.compress(text.encode("utf-8"))))
    list(read_news_commentary_tsv(path))


def enwiki_dump_cut(folder):
    from multivec.data.corpora import ENWIKI_TEST_DUMP
    from multivec.data.download import gensim_test_file

    data = bz2.decompress(gensim_test_file(ENWIKI_TEST_DUMP).read_bytes())
    path = write(folder, "dump.xml.bz2", truncated(bz2.compress(data[:3_000_000]), 0.8), binary=True)
    list(enwiki_dump_paragraphs(path))


TRUNCATED = [
    pytest.param(zip_with_bad_crc, r"data\.zip: truncated or corrupt archive while reading member 'data/file\.txt': "
                                   r"Bad CRC-32", id="zip-bad-crc"),
    pytest.param(zip_cut_in_half, r"data\.zip: neither a zip nor a tar archive \(truncated", id="zip-cut"),
    pytest.param(tgz_cut_in_half, r"data\.tgz: truncated or corrupt archive while reading member 'data/file\.txt'",
                 id="tgz-cut"),
    pytest.param(dev_tgz(DEV_MEMBERS, cut=True), r"dev\.tgz: truncated or corrupt tar archive", id="wmt-dev-tgz-cut"),
    pytest.param(dev_tgz({**DEV_MEMBERS, "dev/newsdev2017-enzh-ref.zh.sgm": b"<refset>\xff\n"}),
                 r"dev\.tgz: member dev/newsdev2017-enzh-ref\.zh\.sgm: not valid UTF-8", id="wmt-dev-member-not-utf8"),
    pytest.param(news_commentary_gz_cut, r"nc\.tsv\.gz:\d+: truncated or corrupt compressed file",
                 id="news-commentary-gz-cut"),
    pytest.param(enwiki_dump_cut, r"dump\.xml\.bz2: truncated or corrupt Wikipedia dump after page \d+ \('",
                 id="wikipedia-dump-cut"),
]


@pytest.mark.parametrize("run, expected", MALFORMED_LINE)
def test_malformed_line_names_file_and_line(tmp_path, run, expected):
    assert_names_file_and_line(tmp_path, run, expected)


@pytest.mark.parametrize("run, expected", MISSING_KEY)
def test_missing_key_names_file_line_and_key(tmp_path, run, expected):
    assert_names_file_and_line(tmp_path, run, expected)


@pytest.mark.parametrize("run, expected", WRONG_TYPE)
def test_wrong_type_names_file_line_and_expected_type(tmp_path, run, expected):
    assert_names_file_and_line(tmp_path, run, expected)


@pytest.mark.parametrize("run, expected", BAD_ENCODING)
def test_bad_encoding_names_file_and_line(tmp_path, run, expected):
    assert_names_file_and_line(tmp_path, run, expected)


@pytest.mark.parametrize("run, expected", UNKNOWN_ID)
def test_reference_to_an_unknown_id_names_file_and_line(tmp_path, run, expected):
    assert_names_file_and_line(tmp_path, run, expected)


@pytest.mark.parametrize("run, expected", DUPLICATE_ID)
def test_duplicate_id_names_both_lines(tmp_path, run, expected):
    assert_names_file_and_line(tmp_path, run, expected)


@pytest.mark.parametrize("run, expected", WRONG_LANGUAGE)
def test_wrong_language_names_file_and_first_line(tmp_path, run, expected):
    assert_names_file_and_line(tmp_path, run, expected)


@pytest.mark.parametrize("run, expected", COUNT_MISMATCH)
def test_count_mismatch_names_file_and_counts(tmp_path, run, expected):
    assert_names_file_and_line(tmp_path, run, expected)


@pytest.mark.parametrize("run, expected", TRUNCATED)
def test_truncated_archive_names_archive_and_member(tmp_path, run, expected):
    assert_names_file_and_line(tmp_path, run, expected)
    assert not (tmp_path / "out.txt").exists() and not (tmp_path / "out.txt.part").exists()


def test_a_few_untranslated_lines_are_counted_not_fatal(tmp_path, caplog):
    """Real corpora hold a few lines left in English on the Chinese side: under the share that refuses the
    file, they are kept and their count and lines logged."""
    text = "".join(f"Sentence {i}.\t第{i}句。\n" for i in range(9)) + "Debian.\tDebian\n"
    with caplog.at_level(logging.WARNING):
        docs = list(read_news_commentary_tsv(write(tmp_path, "nc.tsv", text)))
    assert sum(len(pairs) for _, pairs in docs) == 10
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(re.search(r"nc\.tsv: 1 of 10 zh \(second column\) texts are not Chinese .* e\.g\. line\(s\) 10", w)
               for w in warnings), warnings


def test_english_quoting_chinese_names_is_still_english(tmp_path):
    text = " = Tokyo = \n\n Tokyo ( 東京 ) is the capital of Japan and the seat of its government . \n"
    articles = parse_wikitext(write(tmp_path, "wiki.tokens", text))
    assert [a.title for a in articles] == ["Tokyo"] and "東京" in articles[0].sections[0].text


# ---------------------------------------------------------------- downloads and the sources registry

def test_an_empty_or_short_unverified_download_is_refused(tmp_path, monkeypatch):
    from multivec.data.download import DownloadError, fetch
    from multivec.data.sources import SOURCES, RemoteFile, Source

    upstream = write(tmp_path, "upstream.txt", "")
    remote = RemoteFile(upstream.as_uri(), "local/upstream.txt", None, 100)
    monkeypatch.setitem(SOURCES, "local_test", Source("local_test", "test", {"f.txt": remote}, "none"))
    with pytest.raises(DownloadError, match=r"^local_test/f\.txt: .*upstream\.txt is empty \(0 bytes\)"):
        fetch("local_test", "f.txt", tmp_path / "out" / "f.txt")
    upstream.write_text("only forty bytes of the hundred expected\n")
    with pytest.raises(DownloadError, match=r"^local_test/f\.txt: size mismatch for .*upstream\.txt: expected 100 "
                                            r"bytes, got 41 \(truncated download"):
        fetch("local_test", "f.txt", tmp_path / "out" / "f.txt")
    assert not list((tmp_path / "out").iterdir())  # no partial file left behind


@pytest.mark.parametrize("remote, message", [
    (dict(url=None, mirror_path="a", sha256="ABC"), r"file 'a\.txt': sha256 'ABC' is not 64 lowercase hex digits"),
    (dict(url=None, mirror_path="a", size=0), r"file 'a\.txt': size 0 is not a positive integer"),
    (dict(url=None, mirror_path="a", size=True), r"file 'a\.txt': size True is not a positive integer"),
])
def test_registry_entries_are_checked_when_registered(remote, message):
    from multivec.data.sources import RemoteFile, Source, _register

    with pytest.raises(ValueError, match=r"data source 'bad_test' " + message):
        _register(Source("bad_test", "test", {"a.txt": RemoteFile(**remote)}, "none"))


def test_registry_refuses_a_source_twice_and_two_files_on_one_mirror_path():
    from multivec.data.sources import RemoteFile, Source, _register

    with pytest.raises(ValueError, match=r"data source 'wikitext2' registered twice"):
        _register(Source("wikitext2", "again", {}, "none"))
    files = {"a.txt": RemoteFile(None, "same/path"), "b.txt": RemoteFile(None, "same/path")}
    with pytest.raises(ValueError, match=r"file 'b\.txt': mirror path 'same/path' is also 'a\.txt''s"):
        _register(Source("bad_test", "test", files, "none"))
