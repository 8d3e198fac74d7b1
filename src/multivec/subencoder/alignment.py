"""Natural-language propositions -> words of their sentence (Chen et al. 2023, App. A.3).

As the authors' code does it: lowercase, NLTK Treebank word spans, WordNet lemma then Porter
stem; a binary affinity matrix of equal forms (proposition words x sentence words); a 7x7
convolution kernel (centre 1, the four 3x3 corner blocks 0.01, the rest 0) applied with
``mode="same"`` so that among equal forms the one whose neighbours also match wins; Hungarian
matching (max bipartite matching), keeping only exact matches. The result is the character
spans (end exclusive) of the matched sentence words; ``masks.py`` turns them into subword masks.

Scores are computed in integers, 100x the authors' kernel (centre 100, corners 1): the order
of scores is the same, and the sums are exact, so the batched and per-pair paths agree bit for
bit (float sums of 0.01 in another order could break a tie differently).

Two implementations with identical output: ``align_pair`` (straightforward, one pair at a
time, ``scipy.signal.convolve2d``) and ``align_batch`` (word forms normalised once per distinct
word, affinities and convolutions of a whole block of pairs as one padded array).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np

Span = list[int]

KERNEL_RADIUS = 3
CENTRE_WEIGHT = 100  # the authors' 1, scaled so the corner weight 0.01 becomes 1


def context_kernel() -> np.ndarray:
    """The 7x7 tie-breaking kernel, x100: centre 100, the four 3x3 corner blocks 1, rest 0."""
    size = 2 * KERNEL_RADIUS + 1
    kernel = np.zeros((size, size), dtype=np.int64)
    for rows in (slice(0, KERNEL_RADIUS), slice(KERNEL_RADIUS + 1, size)):
        for cols in (slice(0, KERNEL_RADIUS), slice(KERNEL_RADIUS + 1, size)):
            kernel[rows, cols] = 1
    kernel[KERNEL_RADIUS, KERNEL_RADIUS] = CENTRE_WEIGHT
    return kernel


@lru_cache(maxsize=1)
def _tools():
    from nltk.stem import PorterStemmer, WordNetLemmatizer
    from nltk.tokenize import TreebankWordTokenizer

    from multivec.resources import data_mirror, ensure_nltk_data

    ensure_nltk_data("corpora/wordnet", data_mirror())
    return TreebankWordTokenizer(), WordNetLemmatizer(), PorterStemmer()


def word_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the Treebank words of ``text``."""
    tokenizer = _tools()[0]
    try:
        return list(tokenizer.span_tokenize(text))
    except ValueError:
        # Treebank rewrites quotes and cannot always map them back; whitespace-separated
        # pieces with punctuation split off are the fallback, spans stay exact.
        import re

        return [m.span() for m in re.finditer(r"\w+|[^\w\s]", text)]


def normalise(word: str) -> str:
    """Lowercase, WordNet lemma, Porter stem: the form two words must share to match."""
    _, lemmatizer, stemmer = _tools()
    return stemmer.stem(lemmatizer.lemmatize(word.lower()))


def _matched_spans(affinity: np.ndarray, score: np.ndarray, spans: Sequence[tuple[int, int]]) -> list[Span]:
    from scipy.optimize import linear_sum_assignment

    if affinity.size == 0:
        return []
    rows, cols = linear_sum_assignment(score, maximize=True)
    kept = sorted(int(c) for r, c in zip(rows, cols) if affinity[r, c])
    return [[int(spans[c][0]), int(spans[c][1])] for c in kept]


def align_pair(sentence: str, proposition: str) -> list[Span]:
    """Char spans of the sentence words aligned to ``proposition`` (straightforward reference)."""
    from scipy.signal import convolve2d

    spans = word_spans(sentence)
    sentence_forms = [normalise(sentence[a:b]) for a, b in spans]
    proposition_forms = [normalise(proposition[a:b]) for a, b in word_spans(proposition)]
    affinity = np.array([[int(p == s) for s in sentence_forms] for p in proposition_forms],
                        dtype=np.int64).reshape(len(proposition_forms), len(sentence_forms))
    if affinity.size == 0:
        return []
    score = convolve2d(affinity, context_kernel(), mode="same")
    return _matched_spans(affinity, score, spans)


def _context_scores(affinity: np.ndarray) -> np.ndarray:
    """``convolve2d(a, context_kernel(), mode="same")`` for every matrix of a (B, H, W) stack.

    The kernel is CENTRE*a + (7x7 box sum) - (row band) - (column band) + a; the box and the
    bands come from zero-padded cumulative sums, all in integers.
    """
    r = KERNEL_RADIUS
    b, h, w = affinity.shape
    padded = np.zeros((b, h + 2 * r + 1, w + 2 * r + 1), dtype=np.int64)
    padded[:, r + 1:r + 1 + h, r + 1:r + 1 + w] = affinity
    integral = padded.cumsum(1).cumsum(2)
    size = 2 * r + 1
    box = (integral[:, size:size + h, size:size + w] - integral[:, :h, size:size + w]
           - integral[:, size:size + h, :w] + integral[:, :h, :w])
    rows = padded.cumsum(2)  # row band: same row, columns j-r..j+r
    row_band = rows[:, r + 1:r + 1 + h, size:size + w] - rows[:, r + 1:r + 1 + h, :w]
    cols = padded.cumsum(1)  # column band: same column, rows i-r..i+r
    col_band = cols[:, size:size + h, r + 1:r + 1 + w] - cols[:, :h, r + 1:r + 1 + w]
    return CENTRE_WEIGHT * affinity + box - row_band - col_band + affinity


def align_batch(pairs: Sequence[tuple[str, str]], block: int = 256) -> list[list[Span]]:
    """``align_pair`` for many ``(sentence, proposition)`` pairs, with identical output.

    Each distinct text is split once and each distinct word normalised once; pairs are
    handled in blocks of similar size, each block's affinities and context scores computed
    as one padded integer array; the Hungarian matching runs per pair on its own sub-matrix.
    """
    form_ids: dict[str, int] = {}
    word_forms: dict[str, int] = {}
    split_cache: dict[str, tuple[list[tuple[int, int]], np.ndarray]] = {}

    def split(text: str):
        if text not in split_cache:
            spans = word_spans(text)
            ids = []
            for a, b in spans:
                word = text[a:b]
                if word not in word_forms:
                    word_forms[word] = form_ids.setdefault(normalise(word), len(form_ids))
                ids.append(word_forms[word])
            split_cache[text] = (spans, np.asarray(ids, dtype=np.int64))
        return split_cache[text]

    items = [(split(s), split(p)[1]) for s, p in pairs]
    results: list[list[Span]] = [[] for _ in pairs]
    order = sorted(range(len(items)), key=lambda i: (len(items[i][1]), len(items[i][0][1])))
    for start in range(0, len(order), block):
        chunk = [i for i in order[start:start + block] if len(items[i][1]) and len(items[i][0][1])]
        if not chunk:
            continue
        h = max(len(items[i][1]) for i in chunk)
        w = max(len(items[i][0][1]) for i in chunk)
        prop = np.full((len(chunk), h), -1, dtype=np.int64)
        sent = np.full((len(chunk), w), -2, dtype=np.int64)
        for k, i in enumerate(chunk):
            prop[k, :len(items[i][1])] = items[i][1]
            sent[k, :len(items[i][0][1])] = items[i][0][1]
        affinity = (prop[:, :, None] == sent[:, None, :]).astype(np.int64)
        scores = _context_scores(affinity)
        for k, i in enumerate(chunk):
            ph, sw = len(items[i][1]), len(items[i][0][1])
            results[i] = _matched_spans(affinity[k, :ph, :sw], scores[k, :ph, :sw], items[i][0][0])
    return results
