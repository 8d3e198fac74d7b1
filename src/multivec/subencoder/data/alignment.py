"""Natural-language propositions -> words of their sentence (Chen et al. 2023, App. A.3).

As the authors' code does it: lowercase, NLTK Treebank word spans, WordNet lemma then Porter
stem; a binary affinity matrix of equal forms (proposition words x sentence words); a 7x7
convolution kernel (centre 1, the four 3x3 corner blocks 0.01, the rest 0) applied with
``mode="same"`` so that among equal forms the one whose neighbours also match wins; Hungarian
matching (max bipartite matching), keeping only exact matches. The result is the character
spans (end exclusive) of the matched sentence words; ``masks.py`` turns them into subword masks.

Two modes (config ``subencoder.data.alignment``), as ``ALIGNMENT_MODES`` names them:

- ``authors`` (default; ``align_sub_sentence`` of the authors' ``utils/label_utils.py``): no mask
  when either text has at most one Treebank word, and a proposition's trailing ``"."`` word is
  dropped before matching, so the sentence-final period (a word every proposition of a sentence
  would share) is never in a proposition's mask;
- ``keep_period`` (this project's first version): every word of the proposition is matched, a
  final ``"."`` included, and one-word texts are aligned too.

An empty result (nothing matched, or a degenerate text) is an *unaligned* proposition: callers
count it and never pool an empty mask.

Scores are computed in integers, 100x the authors' kernel (centre 100, corners 1): the order
of scores is the same, and the sums are exact, so the batched and per-pair paths agree bit for
bit (float sums of 0.01 in another order could break a tie differently).

Two implementations with identical output: ``align_pair`` (straightforward, one pair at a
time, ``scipy.signal.convolve2d``) and ``align_batch`` (Treebank spans found once per distinct
word-chunk shape, ``_ChunkedWordSpans``; word forms normalised once per distinct lowercased word;
affinities and convolutions of a whole block of pairs as one padded array).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Sequence

import numpy as np

Span = list[int]

KERNEL_RADIUS = 3
CENTRE_WEIGHT = 100  # the authors' 1, scaled so the corner weight 0.01 becomes 1
ALIGNMENT_MODES = ("authors", "keep_period")
DEFAULT_MODE = "authors"


def check_mode(mode: str) -> str:
    """``mode`` if it is one of ``ALIGNMENT_MODES``; else a ValueError naming the config key."""
    if mode not in ALIGNMENT_MODES:
        raise ValueError(f"config subencoder.data.alignment: {mode!r} is not one of {', '.join(ALIGNMENT_MODES)}")
    return mode


def proposition_words(n_words: int, n_sentence_words: int, last_word: str, mode: str) -> int:
    """How many of the proposition's first words take part in matching under ``mode``: 0 when
    ``authors`` and either text has at most one word; one fewer when ``authors`` and the last
    word is ``"."``; all of them under ``keep_period``."""
    if check_mode(mode) == "keep_period":
        return n_words
    if n_words <= 1 or n_sentence_words <= 1:
        return 0
    return n_words - 1 if last_word == "." else n_words


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

    from multivec.data.nltk_resources import load_nltk_resource

    lemmatizer = WordNetLemmatizer()
    # WordNet is read at the first lemma: load it here, so missing or incomplete data stops naming the
    # resource, $NLTK_DATA and the mirror's nltk_data folder rather than as NLTK's traceback mid-alignment
    load_nltk_resource("corpora/wordnet", lambda: lemmatizer.lemmatize("words"))
    return TreebankWordTokenizer(), lemmatizer, PorterStemmer()


def word_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the Treebank words of ``text``."""
    tokenizer = _tools()[0]
    try:
        return list(tokenizer.span_tokenize(text))
    except ValueError:
        # Treebank rewrites quotes and cannot always map them back; whitespace-separated
        # pieces with punctuation split off are the fallback, spans stay exact.
        return [m.span() for m in re.finditer(r"\w+|[^\w\s]", text)]


def normalise(word: str) -> str:
    """Lowercase, WordNet lemma, Porter stem: the form two words must share to match."""
    _, lemmatizer, stemmer = _tools()
    return stemmer.stem(lemmatizer.lemmatize(word.lower()))


_ALNUM_RUN = re.compile(r"[A-Za-z0-9]+")
_RUN_OR_CHAR = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9]")
_QUOTES = re.compile(r"``|'{2}|\"")  # the quotes span_tokenize maps back, found the way it finds them
# Treebank's contractions without an apostrophe (MacIntyreContractions.CONTRACTIONS2): split inside a run.
_CONTRACTION_WORDS = ("cannot", "gimme", "gonna", "gotta", "lemme", "wanna")


class _ChunkedWordSpans:
    """``word_spans`` of many texts, equal to it, tokenising each distinct word-chunk shape once.

    Treebank's rules act across a single space only through that space and the text's two ends
    (``^``, ``$``): no rule joins words, each inserts spaces next to punctuation, and the rules that
    look past a chunk see a space there. So a chunk's words depend on (chunk, first in text, last
    in text) alone; they are found by NLTK itself on the probe ``"a " + chunk + " a"`` (the ``"a "``
    left out for the first chunk, the ``" a"`` for the last) and cached. No rule looks inside a
    run of ASCII letters and digits except the contractions and the apostrophe clitics
    (``'s``, ``n't``, ...) and the comma rule at its first character (a digit or not), so the
    probe writes each run as ``a`` or ``0``, except in a chunk with an apostrophe or a contraction,
    which is probed as it is. A probe whose inner words do not tile the chunk or whose quote tokens
    do not pair one to one with its quotes (``span_tokenize`` pairs them across the whole text), and
    any text with other whitespace than single spaces between chunks, go through ``word_spans``.

    ``split(text)`` also gives each word's id from ``word_id`` (cached per chunk).
    """

    def __init__(self, word_id=None) -> None:
        self.word_id = word_id or (lambda word: 0)
        self.chunks: dict[tuple[str, bool, bool], tuple[tuple[tuple[int, int], ...], list[int]] | None] = {}
        self.probes: dict[tuple[str, bool, bool], tuple[int, ...] | None] = {}

    def _probe(self, shape: str, first: bool, last: bool) -> tuple[int, ...] | None:
        """Ends of the words of ``shape`` in its context, or None where the chunk view fails."""
        key = (shape, first, last)
        if key not in self.probes:
            tokenizer = _tools()[0]
            before, after = ("" if first else "a "), ("" if last else " a")
            probe = before + shape + after
            try:
                spans = list(tokenizer.span_tokenize(probe))
            except ValueError:
                spans = []
            inner = spans[0 if first else 1:len(spans) if last else len(spans) - 1]
            ok = bool(inner) and (first or spans[0] == (0, 1)) and (last or spans[-1] == (len(probe) - 1, len(probe)))
            position = len(before)
            for start, end in inner:
                ok = ok and start == position and end > start
                position = end
            ok = ok and position == len(before) + len(shape)
            if ok and ('"' in probe or "`" in probe or "''" in probe):
                quote_tokens = sum(t in ('"', "``", "''") for t in tokenizer.tokenize(probe))
                ok = quote_tokens == len(_QUOTES.findall(probe))
            self.probes[key] = tuple(end - len(before) for _, end in inner) if ok else None
        return self.probes[key]

    def _chunk(self, chunk: str, first: bool, last: bool):
        if any(c.isspace() for c in chunk):
            return None
        lower = chunk.lower()
        exact = "'" in chunk or any(word in lower for word in _CONTRACTION_WORDS)
        if not exact and _ALNUM_RUN.fullmatch(chunk):
            ends: tuple[int, ...] | None = (len(chunk),)
        elif exact:
            ends = self._probe(chunk, first, last)
        else:
            pieces = _RUN_OR_CHAR.findall(chunk)
            shape = "".join(("0" if p[0].isdigit() else "a") if _ALNUM_RUN.fullmatch(p) else p for p in pieces)
            shape_ends = self._probe(shape, first, last)
            ends = None
            if shape_ends is not None:
                original_end, total = [], 0
                for piece in pieces:
                    total += len(piece)
                    original_end.append(total)
                ends = tuple(original_end[e - 1] for e in shape_ends)
        if ends is None:
            return None
        spans = tuple(zip((0,) + ends[:-1], ends))
        return spans, [self.word_id(chunk[a:b]) for a, b in spans]

    def split(self, text: str) -> tuple[list[tuple[int, int]], list[int]]:
        """``(word_spans(text), word ids)``."""
        chunks = text.split(" ")
        if "" in chunks:  # leading, trailing or double spaces, or an empty text
            return self._whole(text)
        spans: list[tuple[int, int]] = []
        ids: list[int] = []
        offset, last = 0, len(chunks) - 1
        for i, chunk in enumerate(chunks):
            key = (chunk, i == 0, i == last)
            entry = self.chunks.get(key, False)
            if entry is False:
                entry = self.chunks[key] = self._chunk(chunk, i == 0, i == last)
            if entry is None:
                return self._whole(text)
            words, word_ids = entry
            if len(words) == 1:
                spans.append((offset, offset + len(chunk)))
            else:
                spans.extend((offset + a, offset + b) for a, b in words)
            ids.extend(word_ids)
            offset += len(chunk) + 1
        return spans, ids

    def _whole(self, text: str) -> tuple[list[tuple[int, int]], list[int]]:
        spans = word_spans(text)
        return spans, [self.word_id(text[a:b]) for a, b in spans]

    def __call__(self, text: str) -> list[tuple[int, int]]:
        return self.split(text)[0]


def _matched_spans(affinity: np.ndarray, score: np.ndarray, spans: Sequence[tuple[int, int]]) -> list[Span]:
    from scipy.optimize import linear_sum_assignment

    if affinity.size == 0:
        return []
    rows, cols = linear_sum_assignment(score, maximize=True)
    kept = sorted(int(c) for r, c in zip(rows, cols) if affinity[r, c])
    return [[int(spans[c][0]), int(spans[c][1])] for c in kept]


def align_pair(sentence: str, proposition: str, mode: str = DEFAULT_MODE) -> list[Span]:
    """Char spans of the sentence words aligned to ``proposition`` (straightforward reference)."""
    from scipy.signal import convolve2d

    spans = word_spans(sentence)
    prop_spans = word_spans(proposition)
    last = proposition[prop_spans[-1][0]:prop_spans[-1][1]] if prop_spans else ""
    prop_spans = prop_spans[:proposition_words(len(prop_spans), len(spans), last, mode)]
    sentence_forms = [normalise(sentence[a:b]) for a, b in spans]
    proposition_forms = [normalise(proposition[a:b]) for a, b in prop_spans]
    affinity = np.array([[int(p == s) for s in sentence_forms] for p in proposition_forms],
                        dtype=np.int64).reshape(len(proposition_forms), len(sentence_forms))
    if affinity.size == 0:
        return []
    score = convolve2d(affinity, context_kernel(), mode="same")
    return _matched_spans(affinity, score, spans)


def _context_scores(affinity: np.ndarray) -> np.ndarray:
    """``convolve2d(a, context_kernel(), mode="same")`` for every matrix of a (B, H, W) stack.

    The kernel is CENTRE at the middle plus its four 3x3 corner blocks, which together are the
    outer product of ``v = (1, 1, 1, 0, 1, 1, 1)`` with itself: the corners' sum is ``v`` along
    the rows, then ``v`` along the columns, six shifted adds each, in integers.
    """
    r = KERNEL_RADIUS
    shifts = [d for d in range(2 * r + 1) if d != r]
    b, h, w = affinity.shape
    a = affinity.astype(np.int32, copy=False)
    padded = np.zeros((b, h, w + 2 * r), dtype=np.int32)
    padded[:, :, r:r + w] = a
    rows = padded[:, :, shifts[0]:shifts[0] + w].copy()
    for d in shifts[1:]:
        rows += padded[:, :, d:d + w]
    padded = np.zeros((b, h + 2 * r, w), dtype=np.int32)
    padded[:, r:r + h] = rows
    corners = padded[:, shifts[0]:shifts[0] + h].copy()
    for d in shifts[1:]:
        corners += padded[:, d:d + h]
    return CENTRE_WEIGHT * a + corners


def align_batch(pairs: Sequence[tuple[str, str]], block: int = 64, mode: str = DEFAULT_MODE) -> list[list[Span]]:
    """``align_pair`` for many ``(sentence, proposition)`` pairs (same ``mode``), with identical output.

    Each distinct text is split once, through ``_ChunkedWordSpans`` (NLTK once per distinct chunk
    shape, not per text), and each distinct lowercased word normalised once; pairs are handled
    in blocks of similar size, each block's affinities and context scores computed as one
    padded integer array; the Hungarian matching runs per pair on its own sub-matrix, the same
    matrix ``align_pair`` gives it.
    """
    from scipy.optimize import linear_sum_assignment

    form_ids: dict[str, int] = {}  # normalised form -> id
    lower_forms: dict[str, int] = {}  # lowercased word -> form id (normalise lowercases first)

    def form(word: str) -> int:
        lower = word.lower()
        if lower not in lower_forms:
            lower_forms[lower] = form_ids.setdefault(normalise(lower), len(form_ids))
        return lower_forms[lower]

    splitter = _ChunkedWordSpans(form)
    split_cache: dict[str, tuple[list[tuple[int, int]], np.ndarray]] = {}

    def split(text: str):
        if text not in split_cache:
            spans, ids = splitter.split(text)
            split_cache[text] = (spans, np.asarray(ids, dtype=np.int64))
        return split_cache[text]

    check_mode(mode)

    def proposition_ids(proposition: str, n_sentence_words: int) -> np.ndarray:
        spans, ids = split(proposition)
        last = proposition[spans[-1][0]:spans[-1][1]] if spans else ""
        return ids[:proposition_words(len(ids), n_sentence_words, last, mode)]

    items = []
    for s, p in pairs:
        sentence_split = split(s)
        items.append((sentence_split, proposition_ids(p, len(sentence_split[1]))))
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
        affinity = (prop[:, :, None] == sent[:, None, :]).astype(np.int32)
        scores = _context_scores(affinity)
        for k, i in enumerate(chunk):
            ph, sw = len(items[i][1]), len(items[i][0][1])
            rows, cols = linear_sum_assignment(scores[k, :ph, :sw], maximize=True)
            spans = items[i][0][0]
            results[i] = [list(spans[c]) for c in np.sort(cols[affinity[k, rows, cols] != 0]).tolist()]
    return results
