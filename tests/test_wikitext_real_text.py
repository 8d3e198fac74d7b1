"""RR from real text: tokenised WikiText is detokenised, each ``<unk>`` becomes the encoder
tokenizer's one unknown token (never 4 WordPieces), and an unknown-token share above
``data.max_unknown_share`` warns in the log and the builder's warnings."""

import logging

import pytest

from multivec.data.unknown_tokens import check_unknown_share, unknown_share
from multivec.data.wikitext import detokenize_wikitext, is_tokenized, parse_wikitext, read_wikitext
from multivec.io.resources import load_tokenizer
from multivec.tasks.passage_reranking import build_passage_reranking_task

TOKENISED = """ = Homarus gammarus = 

 Homarus gammarus , known as the European lobster , is a species of <unk> lobster . It weighs 0 @.@ 7 – 2 @.@ 2 kg ( 1 @,@ 500 g ) . 

 = = Description = = 

 The lobster 's claws are " large " and <unk> ; it is a non @-@ native species that costs $ 5 . 

 = Second article = 

 Another lead with <unk> <unk> words . 

 = = History = = 

 It was n't found until 1999 . 
"""


@pytest.fixture(scope="module")
def minilm():
    return load_tokenizer("minilm")


@pytest.mark.parametrize("tokenised,expected", [
    ("Homarus gammarus , known as the European lobster , is here .", "Homarus gammarus, known as the European lobster, is here."),
    ("0 @.@ 7 – 2 @.@ 2 kg ( 1 @,@ 500 g )", "0.7 – 2.2 kg (1,500 g)"),
    ("a non @-@ native species that costs $ 5 ; really", "a non-native species that costs $5; really"),
    ('The claws are " large " and " blue " .', 'The claws are "large" and "blue".'),
    ("It was n't found , the lobster 's claw", "It wasn't found, the lobster's claw"),
    ('an odd " quote stays', 'an odd " quote stays'),
])
def test_detokenize_examples(tokenised, expected):
    assert detokenize_wikitext(tokenised) == expected


def test_unknown_becomes_the_tokenizers_one_unknown_token(tmp_path, minilm):
    path = tmp_path / "wiki.valid.tokens"
    path.write_text(TOKENISED, encoding="utf-8")
    assert is_tokenized(path)
    articles = read_wikitext(path, minilm.unk_token)
    lead = articles[0].sections[0].text
    assert lead == ("Homarus gammarus, known as the European lobster, is a species of [UNK] lobster. "
                    "It weighs 0.7 – 2.2 kg (1,500 g).")
    texts = [s.text for a in articles for s in a.sections]
    pieces = [minilm.convert_ids_to_tokens(ids) for ids in minilm(texts, add_special_tokens=False)["input_ids"]]
    flat = [p for doc in pieces for p in doc]
    assert flat.count("[UNK]") == TOKENISED.count("<unk>") == 4
    assert "##k" not in flat and "<" not in flat  # never "<", "un", "##k", ">"
    share = unknown_share(texts, minilm, label="minilm")
    assert (share["unknown"], share["tokens"], share["tokenizer"]) == (4, len(flat), "minilm")
    # Left as parsed, each <unk> would be 4 WordPieces and no unknown token at all.
    raw = unknown_share([s.text for a in parse_wikitext(path) for s in a.sections], minilm)
    assert raw["unknown"] == 0 and raw["tokens"] >= len(flat) + 3 * 4  # each <unk>: 4 pieces instead of 1


def test_a_raw_file_is_left_as_it_is(tmp_path, minilm):
    path = tmp_path / "wiki.train.raw"
    path.write_text(" = Title = \n\n A raw lead, with 1,500 words (some \"quoted\"). \n\n = = Next = = \n\n More. \n",
                    encoding="utf-8")
    assert not is_tokenized(path)
    assert read_wikitext(path, minilm.unk_token)[0].sections[0].text == 'A raw lead, with 1,500 words (some "quoted").'


def test_the_mirrors_wikitext2_rr_never_splits_unk(mirror, minilm):
    """The demo's RR input: every <unk> of WikiText-2 valid is one [UNK] of the built task's documents."""
    path = mirror / "wikitext-2" / "valid.txt"
    articles = read_wikitext(path, minilm.unk_token)
    task = build_passage_reranking_task(articles, show_progress=False)
    texts = list(task.documents.values())
    assert not any("<unk>" in t or " @-@ " in t or " , " in t for t in texts)
    ids = minilm(texts, add_special_tokens=False)["input_ids"]
    expected = sum(t.count("[UNK]") for t in texts)
    assert sum(i.count(minilm.unk_token_id) for i in ids) == expected > 0
    k = minilm.convert_tokens_to_ids("##k")
    assert not any(doc[j] == k and minilm.convert_ids_to_tokens(doc[j - 1]) == "un" for doc in ids
                   for j in range(1, len(doc)))


def test_the_warning_fires_above_the_threshold(caplog):
    share = {"share": 0.057, "tokens": 1000, "unknown": 57, "unknown_token": "[UNK]"}
    warnings: list[str] = []
    with caplog.at_level(logging.WARNING):
        assert check_unknown_share("RR task", share, 0.01, "wiki.valid.tokens", warnings)
    assert len(warnings) == 1 and "wiki.valid.tokens: RR task: 5.70%" in warnings[0]
    assert "data.max_unknown_share" in warnings[0] and warnings[0] in caplog.text
    assert not check_unknown_share("RR task", share, 0.06, "x", warnings) and len(warnings) == 1
    with pytest.raises(ValueError, match="max_unknown_share"):
        check_unknown_share("RR task", share, 1.5, "x")
