"""Token streams and segments for the NUGGET language model (Qin & Van Durme 2023, §6.2, App. B.2).

The LM reads continuous text cut into segments of s target tokens (s = 128 in the paper); a segment's
history is the h segments before it in the same stream, each encoded independently (eq. 12).

- ``training_streams``: continuous text rebuilt from the autoencoding corpus rows, whose ids are
  ``<source>/<article>/<chunk>``: chunks of one article with consecutive numbers are joined in order; a
  missing number (a chunk held out in dev or dropped) starts a new stream, so no stream spans a gap.
- ``wikitext_streams``: one stream per WikiText article (title, headings and paragraphs in file order; id
  ``<5-digit position in the file> <title>``, since titles repeat), as real text
  (``multivec.data.wikitext.read_wikitext``): a tokenised file is detokenised and each ``<unk>``
  becomes the encoder tokenizer's one unknown token (MiniLM's ``[UNK]``), not 4 pieces ``<``, ``un``,
  ``##k``, ``>``. The whitespace-separated words of that text are the units of the word-level perplexity
  (footnote 6); a word equal to the unknown token is the out-of-vocabulary word it leaves out (§6.2.1).
- ``tokenize_stream``: target-tokenizer ids of a stream, encoded word by word so every token knows the
  word it belongs to (a word's probability is the product of its subwords').
- ``segment_streams``: the segments (stream, position, ids, word ids, and the segment's text for the
  history encoder).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, Sequence

from multivec.io import FirstSeen, MalformedInputError, check_fields, iter_jsonl, write_jsonl


@dataclass
class Stream:
    id: str
    text: str


@dataclass
class TokenizedStream:
    id: str
    ids: list[int]  # target-tokenizer ids, no specials
    word_index: list[int]  # per token, the index of its word in ``words``
    words: list[str]


@dataclass
class Segment:
    stream: int  # index into the tokenized streams
    position: int  # index of the segment within its stream
    ids: list[int]
    word_index: list[int]  # per token, the word index within the stream (global to the stream)
    text: str  # the segment decoded back to text: what the history encoder reads


def _chunk_key(row_id: str, path, number: int) -> tuple[str, int]:
    prefix, _, chunk = row_id.rpartition("/")
    if not prefix or not chunk.isdigit():
        raise MalformedInputError(path, number, f"id {row_id!r} is not '<source>/<article>/<chunk number>'")
    return prefix, int(chunk)


def training_streams(path: str | os.PathLike) -> list[Stream]:
    """Continuous streams from an autoencoding corpus file (``{id, source, ...}`` rows, see module doc).

    Ids must be strings ``<source>/<article>/<chunk number>``, each once, and sources non-empty
    strings; errors name file:line."""
    chunks: dict[str, dict[int, str]] = {}
    ids = FirstSeen(path, "row id")
    for number, row in iter_jsonl(path):
        check_fields(row, {"id": "string", "source": "text"}, path, number)
        ids.add(row["id"], number)
        article, chunk = _chunk_key(row["id"], path, number)
        if chunk in chunks.get(article, {}):
            raise MalformedInputError(path, number, f"chunk {chunk} of {article!r} is defined twice "
                                                    f"(ids differ only in zero padding)")
        chunks.setdefault(article, {})[chunk] = row["source"]
    if not chunks:
        raise MalformedInputError(path, None, "no rows")
    streams = []
    for article in sorted(chunks):
        numbers = sorted(chunks[article])
        run: list[int] = []
        for chunk in numbers + [None]:
            if run and (chunk is None or chunk != run[-1] + 1):
                streams.append(Stream(f"{article}/{run[0]:03d}-{run[-1]:03d}",
                                      " ".join(chunks[article][c] for c in run)))
                run = []
            if chunk is not None:
                run.append(chunk)
    return streams


def wikitext_streams(path: str | os.PathLike, unknown_token: str | None) -> list[Stream]:
    """One stream per WikiText article (``= Title =`` and headings kept), read as real text with every
    ``<unk>`` of a tokenised file mapped to ``unknown_token`` (the encoder tokenizer's; None keeps ``<unk>``)."""
    from multivec.data.wikitext import read_wikitext

    streams = []
    for number, article in enumerate(read_wikitext(path, unknown_token)):
        parts = [f"= {article.title} ="]
        for section in article.sections:
            if section.heading:
                parts.append(f"= = {section.heading} = =")
            parts.append(section.text)
        # Titles are not unique ids (WikiText writes an out-of-vocabulary title as "<unk>", here the unknown
        # token): the id is the article's position in the file, then its title.
        streams.append(Stream(f"{number:05d} {article.title}", " ".join(" ".join(parts).split())))
    if not streams:
        raise MalformedInputError(path, None, "no WikiText article")
    return streams


def write_streams(streams: Sequence[Stream], path: str | os.PathLike) -> None:
    """``{id, text}`` rows: the audit reads them with its ``text_jsonl`` reader."""
    write_jsonl(path, [{"id": s.id, "text": s.text} for s in streams])


def read_streams(path: str | os.PathLike) -> list[Stream]:
    """The ``{id, text}`` rows of ``write_streams``: string ids, each once, non-empty texts (file:line)."""
    streams, ids = [], FirstSeen(path, "stream id")
    for number, row in iter_jsonl(path):
        check_fields(row, {"id": "string", "text": "text"}, path, number)
        ids.add(row["id"], number)
        streams.append(Stream(row["id"], row["text"]))
    if not streams:
        raise MalformedInputError(path, None, "no rows")
    return streams


def word_ids(target_tokenizer, words: Sequence[str]) -> list[list[int]]:
    """Each word's subword ids, without the tokenizer's prefix and end-of-sequence tokens."""
    prefix = len(target_tokenizer.prefix_ids)
    out = []
    for word, ids in zip(words, target_tokenizer.encode(list(words), max_tokens=10**9)):
        pieces = ids[prefix:-1]
        if not pieces:
            raise ValueError(f"word {word!r} has no subword tokens")
        out.append(pieces)
    return out


def tokenize_stream(target_tokenizer, stream: Stream) -> TokenizedStream:
    words = stream.text.split()
    if not words:
        raise ValueError(f"stream {stream.id!r} is empty")
    ids: list[int] = []
    word_index: list[int] = []
    for index, pieces in enumerate(word_ids(target_tokenizer, words)):
        ids += pieces
        word_index += [index] * len(pieces)
    return TokenizedStream(stream.id, ids, word_index, words)


def segment_streams(target_tokenizer, streams: Iterable[TokenizedStream], segment_tokens: int,
                    max_segments: int | None = None) -> list[Segment]:
    """Consecutive segments of ``segment_tokens`` ids (the last of a stream may be shorter), stream by
    stream; ``max_segments`` keeps the first ones (their histories are then all kept too)."""
    if segment_tokens < 2:
        raise ValueError(f"segment_tokens={segment_tokens}: must be >= 2")
    segments: list[Segment] = []
    for s, stream in enumerate(streams):
        for position, start in enumerate(range(0, len(stream.ids), segment_tokens)):
            if max_segments is not None and len(segments) >= max_segments:
                return segments
            ids = stream.ids[start:start + segment_tokens]
            segments.append(Segment(s, position, ids, stream.word_index[start:start + segment_tokens],
                                    target_tokenizer.decode(ids)))
    return segments
