"""App. A.3 alignment (subencoder/data/alignment.py): hand-made cases and batched == per-pair."""
import random

import numpy as np
import pytest
from scipy.signal import convolve2d

from multivec.subencoder.data.alignment import _context_scores, align_batch, align_pair, context_kernel


def words(sentence, spans):
    return [sentence[a:b] for a, b in spans]


def test_kernel_is_the_authors_scaled_by_100():
    k = context_kernel()
    assert k.shape == (7, 7) and k[3, 3] == 100
    assert (k[:3, :3] == 1).all() and (k[4:, 4:] == 1).all() and (k[:3, 4:] == 1).all() and (k[4:, :3] == 1).all()
    assert k[3, :].sum() == 100 and k[:, 3].sum() == 100 and k.sum() == 100 + 36


def test_lemma_and_stem_match_inflected_forms():
    s = "The museums contained many paintings."
    assert words(s, align_pair(s, "A museum contains a painting")) == ["museums", "contained", "paintings"]


def test_repeated_word_goes_to_the_occurrence_whose_context_matches():
    s = "The cat sat on the mat while the dog slept on the sofa."
    spans = align_pair(s, "the dog slept on the sofa")
    assert words(s, spans) == ["the", "dog", "slept", "on", "the", "sofa"]
    # the matched "on"/"the" are the ones after "dog", not the first ones
    assert spans[0][0] == s.index("the dog") and spans[3][0] == s.index("on the sofa")
    spans = align_pair(s, "the cat sat on the mat")
    assert spans[-1][0] == s.index("mat") and spans[3][0] == s.index("on the mat")


def test_punctuation_is_matched_only_where_the_proposition_has_it():
    s = "Pittsburgh, Pennsylvania, has a museum."
    assert words(s, align_pair(s, "Pittsburgh is in Pennsylvania")) == ["Pittsburgh", "Pennsylvania"]
    assert words(s, align_pair(s, "Pittsburgh has a museum.", mode="keep_period")) == [
        "Pittsburgh", "has", "a", "museum", "."]


def test_authors_mode_drops_the_trailing_period_and_keep_period_restores_it():
    s = "Pittsburgh, Pennsylvania, has a museum."
    # authors (default): the sentence-final "." is never in a proposition's mask
    assert words(s, align_pair(s, "Pittsburgh has a museum.")) == ["Pittsburgh", "has", "a", "museum"]
    assert words(s, align_pair(s, "Pittsburgh has a museum.", mode="authors")) == ["Pittsburgh", "has", "a", "museum"]
    # other punctuation is matched as before: only a last word "." is dropped
    assert words(s, align_pair(s, "Pittsburgh, has a museum")) == ["Pittsburgh", ",", "has", "a", "museum"]
    batched = align_batch([(s, "Pittsburgh has a museum."), (s, "Pittsburgh has a museum.")], mode="keep_period")
    assert words(s, batched[0])[-1] == "." and batched[0] == batched[1]
    assert words(s, align_batch([(s, "Pittsburgh has a museum.")])[0])[-1] == "museum"


def test_authors_mode_gives_no_mask_for_a_one_word_text():
    s = "Pittsburgh has a museum."
    assert align_pair(s, "museum") == [] and align_batch([(s, "museum")]) == [[]]
    assert align_pair("Pittsburgh", "Pittsburgh has a museum") == []
    assert align_batch([("Pittsburgh", "Pittsburgh has a museum")]) == [[]]
    # "museum." is two words: the period goes, "museum" is aligned (the authors check before dropping it)
    assert words(s, align_pair(s, "museum.")) == ["museum"]
    # the old behaviour, one option away
    assert words(s, align_pair(s, "museum", mode="keep_period")) == ["museum"]
    assert words("Pittsburgh", align_pair("Pittsburgh", "Pittsburgh has a museum", mode="keep_period")) == [
        "Pittsburgh"]


def test_an_unknown_mode_names_the_config_key():
    with pytest.raises(ValueError, match="subencoder.data.alignment"):
        align_pair("A b.", "A b", mode="keep")
    with pytest.raises(ValueError, match="subencoder.data.alignment"):
        align_batch([("A b.", "A b")], mode="keep")


def test_words_absent_from_the_sentence_are_left_out():
    s = "Jolie signed on in April 2016."
    assert words(s, align_pair(s, "Angelina Jolie signed a contract")) == ["Jolie", "signed"]
    assert align_pair(s, "Nothing here matches") == []
    assert align_pair(s, "") == [] and align_pair("", "Jolie") == []


def test_vectorised_context_scores_equal_convolve2d():
    rng = np.random.default_rng(0)
    stack = (rng.random((6, 11, 17)) < 0.3).astype(np.int64)
    scores = _context_scores(stack)
    for matrix, score in zip(stack, scores):
        assert (convolve2d(matrix, context_kernel(), mode="same") == score).all()


def test_batch_equals_per_pair_on_many_pairs():
    rng = random.Random(3)
    vocabulary = "the a cat dogs sat sits on mat mats of in and , . museum Pittsburgh was is".split()
    sentences = [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 25))) for _ in range(40)]
    pairs = [(s, " ".join(rng.choice(vocabulary + ["absent"]) for _ in range(rng.randint(0, 9))))
             for s in sentences for _ in range(3)]
    for mode in ("authors", "keep_period"):
        assert align_batch(pairs, block=16, mode=mode) == [align_pair(s, p, mode=mode) for s, p in pairs]
