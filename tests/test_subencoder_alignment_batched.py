"""App. A.3 alignment, batched path (subencoder/data/alignment.py): the chunked Treebank spans equal NLTK's, and
``align_batch`` gives the same masks as the per-pair ``align_pair`` on hand-made and real pairs."""
import random

import pytest

from multivec.subencoder.data.alignment import _ChunkedWordSpans, align_batch, align_pair, word_spans

HAND_MADE = [
    # repeated words: the occurrence whose neighbours also match wins
    ("The cat sat on the mat while the dog slept on the sofa.", "the dog slept on the sofa"),
    ("The cat sat on the mat while the dog slept on the sofa.", "the cat sat on the mat"),
    ("Paris is in France and Paris is large, and Paris is old.", "Paris is old"),
    # punctuation: matched only where the proposition has it; quotes, brackets, clitics, final period
    ("Pittsburgh, Pennsylvania, has a museum.", "Pittsburgh has a museum."),
    ("Pittsburgh, Pennsylvania, has a museum.", "Pittsburgh is in Pennsylvania"),
    ('He said "no" (twice) to the studio\'s offer; it wasn\'t enough!', "the studio's offer wasn't enough"),
    ('"Maleficent: Mistress of Evil" (2019) grossed $491 million.', 'Maleficent: Mistress of Evil grossed $491 million'),
    ("It cost 3,36 euros... or -- roughly -- 4 dollars?", "It cost 3,36 euros"),
    # words absent from the sentence; nothing in common; empty texts
    ("Jolie signed on in April 2016.", "Angelina Jolie signed a contract"),
    ("Jolie signed on in April 2016.", "Nothing here matches"),
    ("Jolie signed on in April 2016.", ""),
    ("", "Jolie"),
    # other whitespace, non-ASCII letters, contractions Treebank splits
    ("Hernández  was\tborn in\xa0Curaçao.", "Hernández was born in Curaçao"),
    ("I cannot say we gonna win, 'tis true.", "we cannot win"),
]


def test_batch_equals_per_pair_on_hand_made_cases():
    for mode in ("authors", "keep_period"):
        assert align_batch(HAND_MADE, block=4, mode=mode) == [align_pair(s, p, mode=mode) for s, p in HAND_MADE]
    # and the cases do what they are here for
    sentence, prop = HAND_MADE[2]
    assert [sentence[a:b] for a, b in align_batch([(sentence, prop)])[0]] == ["Paris", "is", "old"]
    assert align_batch([(sentence, prop)])[0][0][0] == sentence.rindex("Paris")
    assert align_batch([HAND_MADE[7], HAND_MADE[9], HAND_MADE[10], HAND_MADE[11]])[1:] == [[], [], []]


def _fuzz_texts(seed: int, n: int) -> list[str]:
    pieces = (list("abcXYZ019,.:;!?()[]{}<>\"'`-$%&#@/_é—½") +
              ["cannot", "Gonna", "wanna", "don't", "'tis", "'s", "n't", "...", "--", "``", "''", "Mr.", "3,36",
               "U.S.", "more'n", "can't", "\u200b"] + ["word"] * 8)
    spaces = [" "] * 20 + ["  ", "\t", "\n", "\xa0"]
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        text = "".join("".join(rng.choice(pieces) for _ in range(rng.randint(1, 4))) + rng.choice(spaces)
                       for _ in range(rng.randint(0, 10)))
        texts.append(text.strip(" ") if rng.random() < 0.7 else text)
    return texts


def test_chunked_spans_equal_treebank_spans_on_punctuation_heavy_text():
    splitter = _ChunkedWordSpans()
    texts = _fuzz_texts(7, 1500)
    assert [splitter(t) for t in texts] == [word_spans(t) for t in texts]
    # the cache is shared across texts and was actually used: far fewer NLTK probes than chunks
    assert 0 < len(splitter.probes) < sum(len(t.split(" ")) for t in texts) / 2


def test_chunked_spans_fall_back_to_treebank_where_chunks_are_not_independent():
    splitter = _ChunkedWordSpans()
    for text in ["a\tb.", "a  b.", " a b.", "a b. ", "x\xa0y, z."]:
        assert splitter(text) == word_spans(text)
    assert splitter.chunks[("a\tb.", True, True)] is None  # a chunk with other whitespace has no words of its own
    assert splitter.chunks[("x\xa0y,", True, False)] is None
    assert ("b.", False, True) not in splitter.chunks  # texts with empty chunks went to Treebank whole


@pytest.fixture(scope="module")
def propsegment_pairs(mirror):
    from multivec.subencoder.data.propsegment import load_split

    folder = mirror / "propsegment" / "v1"
    if not (folder / "propositions.dev.json").exists():
        pytest.skip(f"PropSegment v1 is not in the mirror ({folder})")
    pairs = []
    for cluster in load_split(str(folder), "dev"):
        for sentence in (s for d in cluster.documents.values() for s in d if s.propositions):
            for prop in sentence.propositions:
                text = " ".join(sentence.text[a:b] for i, (a, b) in enumerate(sentence.token_spans) if i in prop)
                pairs.append((sentence.text, text))
    return pairs


def test_batch_equals_per_pair_on_propsegment_sentences(propsegment_pairs):
    sample = random.Random(0).sample(propsegment_pairs, min(400, len(propsegment_pairs)))
    # a proposition of one sentence against another sentence too: absent words, partial overlap
    sample += [(s, p) for (s, _), (_, p) in zip(sample[:100], sample[100:200])]
    batched = align_batch(sample)
    assert batched == [align_pair(s, p) for s, p in sample]
    assert align_batch(sample[:150], mode="keep_period") == [align_pair(s, p, mode="keep_period")
                                                             for s, p in sample[:150]]
    assert sum(bool(spans) for spans in batched[:400]) > 390  # real propositions do align
