"""Segment streams of the NUGGET LM (Table 3, §6.2): continuity, word alignment, segmentation."""
import json

import pytest

from multivec.io import MalformedInputError
from multivec.nugget.lm_data import (Stream, read_streams, segment_streams, tokenize_stream, training_streams,
                                     wikitext_streams, write_streams)
from multivec.nugget.target_tokenizer import TargetTokenizer


@pytest.fixture(scope="module")
def tokenizer():
    texts = ["the cat sat on the mat", "a dog ran in the park", "<unk> words and more words"] * 20
    return TargetTokenizer.train_bpe(texts, 120)


def write_rows(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_training_streams_join_consecutive_chunks_and_break_at_gaps(tmp_path):
    rows = [{"id": "src/0001-B/000", "source": "b zero"},
            {"id": "src/0000-A/001", "source": "a one"},
            {"id": "src/0000-A/000", "source": "a zero"},
            {"id": "src/0000-A/003", "source": "a three"}]  # 002 missing (e.g. in dev): new stream
    path = tmp_path / "train.jsonl"
    write_rows(path, rows)
    streams = training_streams(path)
    assert [(s.id, s.text) for s in streams] == [("src/0000-A/000-001", "a zero a one"),
                                                 ("src/0000-A/003-003", "a three"),
                                                 ("src/0001-B/000-000", "b zero")]


def test_training_streams_reject_ids_without_chunk_number(tmp_path):
    path = tmp_path / "train.jsonl"
    write_rows(path, [{"id": "no-chunk", "source": "text"}])
    with pytest.raises(MalformedInputError, match="train.jsonl"):
        training_streams(path)


def test_wikitext_streams_one_per_article(tmp_path):
    path = tmp_path / "test.txt"
    path.write_text(" \n = First = \n \n Alpha <unk> beta . \n \n = = Part = = \n \n Gamma . \n"
                    " \n = Second = \n \n Delta . \n")
    streams = wikitext_streams(path, "[UNK]")
    assert [s.id for s in streams] == ["00000 First", "00001 Second"]
    assert streams[0].text == "= First = Alpha [UNK] beta. = = Part = = Gamma."  # real text (read_wikitext)
    assert streams[1].text == "= Second = Delta."


def test_wikitext_streams_carry_the_encoders_unknown_token_not_unk_pieces(tmp_path):
    """A tokenised WikiText's <unk> became 4 WordPieces (<, un, ##k, >) of every LM stream; read
    through read_wikitext it is the encoder tokenizer's one unknown token, and @-@ joiners are undone."""
    from multivec.nugget.processing import load_source_tokenizer

    source = load_source_tokenizer("tiny-random-bert", "en_XX")
    path = tmp_path / "test.txt"
    path.write_text(" \n = A <unk> title = \n \n The <unk> of well @-@ known <unk> , 1 @,@ 000 men . \n")
    streams = wikitext_streams(path, source.unk_token)
    assert [s.id for s in streams] == ["00000 A [UNK] title"]  # `<5-digit position> <title>`, as before
    text = streams[0].text
    assert "<unk>" not in text and "@" not in text and sum("[UNK]" in w for w in text.split()) == 3
    pieces = source.tokenize(text)
    assert pieces.count(source.unk_token) == 3 and not {"<", "un", "##k", ">"} & set(pieces), pieces
    tokenized = tokenize_stream(TargetTokenizer.from_source(source, None), streams[0])
    assert [w for w in tokenized.words if "[UNK]" in w] == ["[UNK]", "[UNK]", "[UNK],"]  # detokenised punctuation
    assert len(tokenized.ids) == len(pieces)


def test_wikitext_streams_with_repeated_titles_get_distinct_ids(tmp_path):
    # WikiText writes out-of-vocabulary titles as <unk>: two such articles once gave two streams with the
    # id "<unk>", which the stream reader (rightly) refuses as a duplicate id.
    source = tmp_path / "test.txt"
    source.write_text(" \n = <unk> = \n \n Alpha . \n \n = <unk> = \n \n Beta . \n")
    streams = wikitext_streams(source, "[UNK]")
    assert [s.id for s in streams] == ["00000 [UNK]", "00001 [UNK]"]
    written = tmp_path / "streams.jsonl"
    write_streams(streams, written)
    assert [s.text for s in read_streams(written)] == ["= [UNK] = Alpha.", "= [UNK] = Beta."]


def test_streams_round_trip_and_bad_rows(tmp_path):
    path = tmp_path / "s.jsonl"
    write_streams([Stream("x", "one two")], path)
    assert [(s.id, s.text) for s in read_streams(path)] == [("x", "one two")]
    write_rows(path, [{"id": "x"}])
    with pytest.raises(MalformedInputError, match="s.jsonl"):
        read_streams(path)


def test_tokens_know_their_words_and_decode_back(tokenizer):
    stream = tokenize_stream(tokenizer, Stream("s", "the cat sat on <unk> mat"))
    assert stream.words == ["the", "cat", "sat", "on", "<unk>", "mat"]
    assert len(stream.ids) == len(stream.word_index) >= len(stream.words)
    assert stream.word_index == sorted(stream.word_index)  # words in order, each a run of tokens
    assert set(stream.word_index) == set(range(6))
    plain = tokenize_stream(tokenizer, Stream("p", "the cat sat on the mat"))
    assert tokenizer.decode(plain.ids) == "the cat sat on the mat"  # word-by-word ids are the text's


def test_segments_cut_every_s_tokens_per_stream(tokenizer):
    streams = [tokenize_stream(tokenizer, Stream(str(i), text))
               for i, text in enumerate(["the cat sat on the mat " * 3, "a dog ran"])]
    segments = segment_streams(tokenizer, streams, 4)
    first = [s for s in segments if s.stream == 0]
    assert [s.position for s in first] == list(range(len(first)))
    assert sum((s.ids for s in first), []) == streams[0].ids
    assert all(len(s.ids) == 4 for s in first[:-1])
    assert [s.position for s in segments if s.stream == 1][0] == 0
    assert len(segment_streams(tokenizer, streams, 4, max_segments=2)) == 2
    with pytest.raises(ValueError, match="segment_tokens"):
        segment_streams(tokenizer, streams, 1)
