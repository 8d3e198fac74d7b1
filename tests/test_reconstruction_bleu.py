"""Fig. 4's BLEU compares like with like: hypotheses are scored against the target tokenizer's
round trip of the reference, lowercased when the target vocabulary is uncased, with the round trip's own
score against the reference as the ceiling."""

import pytest

from multivec.nugget.analysis.reconstruction_bleu import (corpus_bleu, fig4_table, is_uncased, reconstruction_bleu,
                                                          round_trip)
from multivec.nugget.target_tokenizer import TargetTokenizer
from multivec.io.resources import load_tokenizer

# Cased references with punctuation, numbers and a contraction: what MiniLM's uncased WordPieces lose.
REFERENCES = ["The European lobster, Homarus gammarus, lives in the Atlantic Ocean.",
              "In 1999 Anna Smith's film won three awards (and two nominations) in Paris.",
              "Debian's APT keeps packages up to date; run `apt update` first!"]


@pytest.fixture(scope="module")
def uncased():
    return TargetTokenizer.from_source(load_tokenizer("minilm"), None)  # the demo's AE target vocabulary


@pytest.fixture(scope="module")
def cased():
    return TargetTokenizer.train_bpe(REFERENCES * 4, 400)  # the demo's MT kind: a byte-level BPE, cased


def test_casing_is_detected_from_the_tokenizer(uncased, cased):
    assert is_uncased(uncased) and is_uncased(uncased.backend)  # TargetTokenizer or the HF tokenizer itself
    assert not is_uncased(cased)


def test_a_perfect_round_trip_scores_100_against_a_cased_reference(uncased):
    perfect = round_trip(REFERENCES, uncased)
    scores = reconstruction_bleu(perfect, REFERENCES, uncased)
    assert scores["bleu"] == pytest.approx(100.0) and scores["bleu_unit"] == pytest.approx(1.0)
    assert scores["lowercased"] is True
    # The old comparison (case-sensitive, against the cased reference) scores the same perfect decoder far lower.
    assert corpus_bleu(perfect, REFERENCES, "13a")["bleu"] < 70
    # The ceiling: the round trip against the reference, lowercased; below 100 (WordPiece spacing) but above
    # the case-sensitive score.
    assert scores["ceiling"] == pytest.approx(corpus_bleu(perfect, REFERENCES, "13a", lowercase=True)["bleu"])
    assert corpus_bleu(perfect, REFERENCES, "13a")["bleu"] < scores["ceiling"] <= 100
    assert scores["round_trips"] == perfect


def test_an_imperfect_decode_scores_below_100_and_case_matters_only_for_cased_vocabularies(uncased, cased):
    worse = [" ".join(t.split()[:-3]) for t in round_trip(REFERENCES, uncased)]
    assert reconstruction_bleu(worse, REFERENCES, uncased)["bleu"] < 100
    cased_trips = round_trip(REFERENCES, cased)
    assert cased_trips == REFERENCES  # a byte-level BPE writes the text back exactly: ceiling 100
    cased_scores = reconstruction_bleu([t.upper() for t in cased_trips], REFERENCES, cased)
    assert cased_scores["lowercased"] is False and cased_scores["ceiling"] == pytest.approx(100.0)
    assert cased_scores["bleu"] < 50  # a cased vocabulary could have written the right case


def test_round_trip_rejects_what_is_no_tokenizer():
    with pytest.raises(TypeError, match="is no tokenizer"):
        round_trip(["text"], object())
    with pytest.raises(ValueError, match="2 hypotheses but 1 references"):
        reconstruction_bleu(["a", "b"], ["a"], object())


def test_fig4_table_requires_the_ceiling_and_casing():
    summary = {"objective": "ae", "ratio": "0.1", "vectors_per_document": 3, "bleu": 50.0, "documents": 2}
    with pytest.raises(ValueError, match="lacks key 'ceiling'"):
        fig4_table([summary], [{"best_dev_loss": 1.0, "train_steps": 2}])
    df = fig4_table([{**summary, "ceiling": 91.234, "lowercased": True}], [{"best_dev_loss": 1.0, "train_steps": 2}])
    assert df.loc[0, "ceiling"] == 91.23 and bool(df.loc[0, "lowercased"])
