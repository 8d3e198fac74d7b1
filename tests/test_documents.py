"""Packing sentences (AE) and sentence pairs (MT) into documents of <= max_tokens subwords."""

import gzip
import json
import io
import itertools
import logging
import tarfile

import pytest

from multivec.data.corpora import Paragraph, english_sentence_splitter, read_debian_reference_pairs, read_paragraphs
from multivec.data.documents import (PackingStats, TokenCounter, build_autoencoding_corpus, deterministic_split,
                                     enforce_limit, group_streams, pack_lengths, pack_paragraphs)
from multivec.data.translation_corpus import (TranslationStats, build_translation_corpus_debian,
                                              build_translation_corpus_wmt, parse_wmt_sgm, read_news_commentary_tsv,
                                              read_wmt19_dev)
from multivec.io import MalformedInputError


class WhitespaceTokenizer:
    """Stands in for a subword tokenizer: one token per whitespace-separated word."""

    def __call__(self, texts, add_special_tokens=False):
        return {"input_ids": [t.split() for t in texts]}


@pytest.fixture(scope="module")
def minilm():
    from multivec.io.resources import load_tokenizer

    return load_tokenizer("minilm")


def subwords(tokenizer, text):
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def model_tokens(tokenizer, text):
    """Tokens as the model sees the text: special tokens included ([CLS] ... [SEP] for MiniLM)."""
    return len(tokenizer(text, add_special_tokens=True)["input_ids"])


# ---------------------------------------------------------------- packing primitives

def test_pack_lengths_greedy_adjacent_and_skips_long():
    groups, skipped = pack_lengths([3, 4, 2, 9, 1, 1, 5, 6], max_tokens=8)
    assert groups == [[0, 1], [2], [4, 5, 6], [7]]  # item 3 (9 > 8) is skipped and closes [2]
    assert skipped == [3]
    assert pack_lengths([], 5) == ([], [])
    with pytest.raises(ValueError):
        pack_lengths([1], 0)


def test_enforce_limit_resplits_groups_whose_whole_count_is_higher():
    lengths = [2, 2, 2]
    def count(groups):  # joining costs one extra token per boundary
        return [sum(lengths[i] for i in g) + len(g) - 1 for g in groups]
    assert enforce_limit([[0, 1, 2]], count, 6) == [[0, 1], [2]]
    assert enforce_limit([[0, 1]], count, 6) == [[0, 1]]


def test_group_streams_by_corpus_and_doc():
    ps = [Paragraph("a", "c", "d1"), Paragraph("b", "c", "d1"), Paragraph("c", "c", "d2"), Paragraph("d", "x", "d2")]
    assert [[p.text for p in s] for s in group_streams(ps)] == [["a", "b"], ["c"], ["d"]]


def test_deterministic_split():
    items = [f"doc{i}" for i in range(100)]
    train, dev = deterministic_split(items, items, dev_size=10, seed=1)
    assert len(dev) == 10 and len(train) == 90 and not set(train) & set(dev)
    assert train == sorted(train, key=items.index) and dev == sorted(dev, key=items.index)  # input order kept
    assert deterministic_split(items, items, dev_size=10, seed=1) == (train, dev)
    assert deterministic_split(items, items, dev_size=10, seed=2)[1] != dev
    train, dev = deterministic_split(items, items, dev_fraction=0.2, seed=1, max_documents=50)
    assert (len(train), len(dev)) == (40, 10)
    with pytest.raises(ValueError, match="exactly one"):
        deterministic_split(items, items, seed=1)
    with pytest.raises(ValueError, match="leaves no training"):
        deterministic_split(items, items, dev_size=100)
    with pytest.raises(ValueError, match="not unique"):
        deterministic_split(["a", "a"], ["a", "a"], dev_size=1)


def test_build_autoencoding_corpus_small():
    paragraphs = [Paragraph("one two three. four five.", "c", "art1", "", 0),
                  Paragraph("six seven eight nine ten eleven twelve. thirteen.", "c", "art1", "", 1),
                  Paragraph("alpha beta. gamma.", "c", "art2", "", 0)]
    split = lambda text: [s.strip() + "." for s in text.split(".") if s.strip()]
    stats = PackingStats()
    train, dev = build_autoencoding_corpus([paragraphs], WhitespaceTokenizer(), 5, dev_size=1, seed=0,
                                           split_sentences=split, stats=stats)
    rows = train + dev
    assert all(r["source"] == r["target"] and set(r) == {"id", "source", "target", "source_sentence_ends"} for r in rows)
    assert stats.skipped_long_sentences == 1  # the 7-word sentence
    assert sorted(r["source"] for r in rows) == sorted(
        ["one two three. four five.", "thirteen.", "alpha beta. gamma."])
    assert all(len(r["source"].split()) <= 5 for r in rows)


# ---------------------------------------------------------------- AE documents on real data

def _sentence_streams(paragraphs, split):
    for stream in group_streams(paragraphs):
        yield [s for p in stream for s in split(p.text)]


def test_autoencoding_documents_on_mirror(mirror, minilm, caplog):
    split = english_sentence_splitter(mirror)
    wikitext = list(itertools.islice(read_paragraphs("wikitext2", mirror / "wikitext-2" / "valid.txt"), 400))
    debian = list(itertools.islice(read_paragraphs("debian_reference", mirror / "debian-reference" / "pairs.jsonl"), 300))
    max_tokens = 64
    for paragraphs in (wikitext, debian):
        stats = PackingStats()
        with caplog.at_level(logging.WARNING):
            docs = pack_paragraphs(paragraphs, TokenCounter(minilm), max_tokens, split, stats)
        assert docs and stats.documents == len(docs)
        for doc in docs:  # no document over the limit, counted as a whole with its special tokens
            assert 0 < model_tokens(minilm, doc.text) == doc.n_tokens <= max_tokens
            assert [doc.text[:end].endswith(s) for s, end in zip(doc.sentences, doc.sentence_ends)] == \
                [True] * len(doc.sentences) and doc.sentence_ends[-1] == len(doc.text)
        # The documents, in order, are the sentence stream minus the skipped (too long) sentences,
        # and each document is a run of adjacent sentences.
        expected, skipped_positions, position = [], [], 0
        for sentences in _sentence_streams(paragraphs, split):
            for sentence in sentences:
                if subwords(minilm, sentence) > max_tokens - 2:  # [CLS] and [SEP] take 2 of the 64
                    skipped_positions.append(position)
                else:
                    expected.append((position, sentence))
                position += 1
        assert [s for d in docs for s in d.sentences] == [s for _, s in expected]
        assert stats.skipped_long_sentences == len(skipped_positions)
        positions = iter(p for p, _ in expected)
        for doc in docs:
            spots = [next(positions) for _ in doc.sentences]
            assert spots == list(range(spots[0], spots[0] + len(spots)))
        assert len({d.id for d in docs}) == len(docs)
    assert stats.skipped_long_sentences == 0 or "never truncated" in caplog.text


def test_autoencoding_corpus_is_deterministic(mirror, minilm):
    def build(seed):
        sources = [itertools.islice(read_paragraphs("wikitext2", mirror / "wikitext-2" / "test.txt"), 200)]
        return build_autoencoding_corpus(sources, minilm, 128, dev_size=8, seed=seed, mirror=mirror, max_documents=40)
    train, dev = build(13)
    assert (len(train), len(dev)) == (32, 8)
    assert build(13) == (train, dev)
    assert build(14) != (train, dev)


# ---------------------------------------------------------------- MT documents

def test_translation_documents_from_debian_pairs(mirror, minilm):
    path = mirror / "debian-reference" / "pairs.jsonl"
    stats = TranslationStats()
    train, dev = build_translation_corpus_debian(path, minilm, 128, dev_size=16, seed=13, stats=stats)
    assert len(dev) == 16 and len(train) + len(dev) == stats.documents
    assert build_translation_corpus_debian(path, minilm, 128, dev_size=16, seed=13) == (train, dev)
    rows = sorted(train + dev, key=lambda r: r["id"])  # ids sort in book order
    # the model's source limit (nugget.max_source_tokens = 128) counts [CLS] and [SEP]: nothing is truncated
    assert max(model_tokens(minilm, r["source"]) for r in rows) <= 128
    # pairs are never broken: the documents concatenate to the book's pairs minus the skipped ones
    pairs = [p for p in read_debian_reference_pairs(path) if subwords(minilm, p.en) <= 126]
    assert len(pairs) == stats.pairs - stats.skipped_long_pairs
    assert " ".join(r["source"] for r in rows) == " ".join(p.en for p in pairs)
    assert "".join(r["target"] for r in rows).replace(" ", "") == "".join(p.zh for p in pairs).replace(" ", "")
    assert all(r["source"] and r["target"] for r in rows)


NEWS_COMMENTARY_FIXTURE = (
    "Global warming is real.\t全球变暖是真实的。\n"
    "Scientists agree on it.\t科学家们对此意见一致。\n"
    "\n"
    "Markets fell today.\t今天市场下跌。\n"
    "Only English here.\t\n"
    "Investors were worried about rates.\t投资者担心利率。\n"
    "\t\n"
    "A third document with one very long sentence that goes on.\t第三篇文档。\n"
    "Short.\t短。\n"
)


def _sgm(kind, docs):
    lines = [f'<{kind} setid="newsdev2017" srclang="en" trglang="zh">']
    for docid, segs in docs:
        lines.append(f'<doc sysid="ref" docid="{docid}" genre="news" origlang="en">')
        lines.append("<p>")
        lines.extend(f'<seg id="{i}">{text}</seg>' for i, text in enumerate(segs, start=1))
        lines.append("</p>")
        lines.append("</doc>")
    lines.append(f"</{kind}>")
    return "\n".join(lines) + "\n"


@pytest.fixture
def wmt_files(tmp_path):
    train = tmp_path / "news-commentary-v14.en-zh.tsv.gz"
    with gzip.open(train, "wt", encoding="utf-8") as handle:
        handle.write(NEWS_COMMENTARY_FIXTURE)
    dev = tmp_path / "dev.tgz"
    members = {
        "dev/newsdev2017-enzh-src.en.sgm": _sgm("srcset", [("d1", ["Hello &amp; welcome.", "Second sentence here."]),
                                                           ("d2", ["Another doc."])]),
        "dev/newsdev2017-enzh-ref.zh.sgm": _sgm("refset", [("d1", ["你好，欢迎。", "第二句。"]), ("d2", ["另一篇。"])]),
        "dev/newstest2018-enzh-src.en.sgm": _sgm("srcset", [("t1", ["Test one.", "Test two."])]),
        "dev/newstest2018-enzh-ref.zh.sgm": _sgm("refset", [("t1", ["测试一。", "测试二。"])]),
    }
    with tarfile.open(dev, "w:gz") as archive:
        for name, text in members.items():
            data = text.encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return train, dev


def test_news_commentary_reader(wmt_files, caplog):
    train, _ = wmt_files
    stats = TranslationStats()
    with caplog.at_level(logging.WARNING):
        docs = list(read_news_commentary_tsv(train, stats))
    assert [len(pairs) for _, pairs in docs] == [2, 2, 2]
    assert docs[1][1][1].en == "Investors were worried about rates." and docs[1][1][1].zh == "投资者担心利率。"
    assert stats.skipped_lines == 1 and "skipped 1 misaligned lines" in caplog.text and "lines 5" in caplog.text


def test_news_commentary_reader_rejects_bad_utf8(tmp_path):
    path = tmp_path / "nc.tsv"
    path.write_bytes("a\tb\n".encode() + b"\xff\tx\n")
    with pytest.raises(MalformedInputError, match=r"nc\.tsv:2: not valid UTF-8"):
        list(read_news_commentary_tsv(path))


def test_wmt_sgm_and_dev_tarball(wmt_files):
    _, dev = wmt_files
    docs = read_wmt19_dev(dev)
    assert [(name, docid, len(pairs)) for name, docid, pairs in docs] == [
        ("newsdev2017", "d1", 2), ("newsdev2017", "d2", 1), ("newstest2018", "t1", 2)]
    assert docs[0][2][0].en == "Hello & welcome." and docs[0][2][0].zh == "你好，欢迎。"
    with pytest.raises(MalformedInputError, match="outside any <doc>"):
        parse_wmt_sgm('<seg id="1">x</seg>\n', "bad.sgm")


def test_translation_corpus_from_wmt_format(wmt_files):
    train_path, dev_path = wmt_files
    stats = TranslationStats()
    train, dev = build_translation_corpus_wmt(train_path, dev_path, WhitespaceTokenizer(), max_tokens=9, stats=stats)
    assert [r["source"] for r in train] == [
        "Global warming is real. Scientists agree on it.",
        "Markets fell today. Investors were worried about rates.",
        "Short.",  # the 11-word sentence is skipped, never truncated
    ]
    assert train[0]["target"] == "全球变暖是真实的。科学家们对此意见一致。"
    assert stats.skipped_long_pairs == 1 and stats.skipped_lines == 1
    assert [r["source"] for r in dev] == ["Hello & welcome. Second sentence here.", "Another doc.", "Test one. Test two."]
    assert dev[2]["target"] == "测试一。测试二。"
    assert all(len(r["source"].split()) <= 9 for r in train + dev)
    _, capped = build_translation_corpus_wmt(train_path, dev_path, WhitespaceTokenizer(), max_tokens=9, dev_size=2)
    assert len(capped) == 2


# ---------------------------------------------------------------- sentence ends and the model's limits

class SpecialsTokenizer:
    """Whitespace tokens plus, with add_special_tokens, a start and an end token (like [CLS] ... [SEP]);
    targets (``text_target``) are counted one token per character, plus the two specials."""

    def __call__(self, texts=None, add_special_tokens=False, text_target=None):
        if text_target is not None:
            ids = [list(t.replace(" ", "")) for t in text_target]
        else:
            ids = [t.split() for t in texts]
        return {"input_ids": [(["<s>"] + x + ["</s>"]) if add_special_tokens else x for x in ids]}


def test_autoencoding_rows_keep_punkt_sentence_ends(mirror):
    text = "Dr. Smith met Mr. Jones at 5 p.m. on Monday. They talked about St. Louis for hours! Then Dr. Who left."
    train, dev = build_autoencoding_corpus([[Paragraph(text, "c", "art")], [Paragraph("Filler one. Filler two.", "c", "b")]],
                                           WhitespaceTokenizer(), 64, dev_size=1, seed=0, mirror=mirror)
    row = next(r for r in train + dev if r["source"].startswith("Dr."))
    assert row["source"] == text
    pieces, start = [], 0
    for end in row["source_sentence_ends"]:
        pieces.append(row["source"][start:end].strip())
        start = end
    assert pieces == ["Dr. Smith met Mr. Jones at 5 p.m. on Monday.", "They talked about St. Louis for hours!",
                      "Then Dr. Who left."]


def test_translation_rows_keep_sentence_ends_inside_and_between_pairs(tmp_path, mirror):
    path = tmp_path / "pairs.jsonl"
    rows = [{"doc": "ch1", "i": 0, "en": "Dr. Smith went home. He slept.", "zh": "史密斯医生回家了。他睡了。"},
            {"doc": "ch1", "i": 1, "en": "Short heading", "zh": "短标题"},
            {"doc": "ch2", "i": 0, "en": "Another chapter.", "zh": "另一章。"}]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    train, dev = build_translation_corpus_debian(path, WhitespaceTokenizer(), 64, dev_size=1, seed=0,
                                                 split_sentences=english_sentence_splitter(mirror))
    row = next(r for r in train + dev if r["id"].startswith("debian-reference/0000"))
    assert row["source"] == "Dr. Smith went home. He slept. Short heading"
    assert row["source_sentence_ends"] == [len("Dr. Smith went home."), len("Dr. Smith went home. He slept."),
                                           len(row["source"])]


def test_limits_count_special_tokens_on_both_sides(tmp_path):
    path = tmp_path / "pairs.jsonl"
    words = lambda n, w: " ".join([w] * n)
    rows = [{"doc": "a", "i": i, "en": words(3, f"e{i}"), "zh": "中" * 5} for i in range(6)]
    rows.append({"doc": "a", "i": 6, "en": words(9, "long"), "zh": "长"})      # 9 + 2 specials > 10: skipped
    rows.append({"doc": "a", "i": 7, "en": "ok .", "zh": "长" * 9})            # target 9 + 2 > 10: skipped
    rows += [{"doc": "b", "i": i, "en": words(4, f"b{i}"), "zh": "乙"} for i in range(4)]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    stats = TranslationStats()
    tokenizer = SpecialsTokenizer()
    train, dev = build_translation_corpus_debian(path, tokenizer, 10, dev_size=1, seed=0, stats=stats,
                                                 target_tokenizer=tokenizer, max_target_tokens=10)
    out = train + dev
    for row in out:  # the model's view, specials included, fits both limits: nothing would be truncated
        assert len(tokenizer([row["source"]], add_special_tokens=True)["input_ids"][0]) <= 10
        assert len(tokenizer(text_target=[row["target"]], add_special_tokens=True)["input_ids"][0]) <= 10
    assert stats.skipped_long_pairs == 2 and stats.skipped_long_targets == 1
    # chapter a: two 3-word sources would fit (6 + 2 <= 10) but their targets would not (10 + 2 > 10),
    # so each pair is its own document; chapter b: two 4-word pairs a document (8 + 2 = 10)
    assert sorted(len(r["source"].split()) for r in out) == [3, 3, 3, 3, 3, 3, 8, 8]
    assert TokenCounter(tokenizer).specials == 2 and TokenCounter(tokenizer).budget(10) == 8
    with pytest.raises(ValueError, match="no room for text"):
        TokenCounter(tokenizer).budget(2)


def test_wmt_segments_empty_on_one_side_are_left_out_and_counted(caplog):
    from multivec.data.translation_corpus import align_wmt_sgm

    source = _sgm("srcset", [("d1", ["One.", "", "Three."])])
    reference = _sgm("refset", [("d1", ["一。", "二。", ""])])
    with caplog.at_level(logging.WARNING):
        [(docid, pairs)] = align_wmt_sgm(source, reference, "src.sgm", "ref.sgm")
    assert docid == "d1" and [(p.i, p.en, p.zh) for p in pairs] == [(0, "One.", "一。")]
    assert "src.sgm / ref.sgm: left out 2 segment(s) empty on one side" in caplog.text


def test_news_commentary_language_is_checked_after_the_last_document(tmp_path):
    """The reader streams documents to the packer; a file in the wrong language still stops the build, at the
    end of the reading step, naming the file and the first line in the wrong language."""
    path = tmp_path / "nc.tsv"
    path.write_text("Hello.\t你好。\n\nGood day.\tGuten Tag.\nNice.\tSchön.\n", encoding="utf-8")
    reader = read_news_commentary_tsv(path)
    assert next(reader)[1][0].zh == "你好。"
    with pytest.raises(MalformedInputError, match=r"nc\.tsv:3: zh \(second column\) is not Chinese: 2 of 3"):
        list(reader)
