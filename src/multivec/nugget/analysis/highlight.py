"""Fig. 6 (Qin & Van Durme 2023, §5.2): a document with every token shaded by its score.

Each source token is drawn over its characters in the original text (the fast tokenizer's offsets),
darker for a higher scorer output s_i (eq. 2, min-max scaled within the document), with a green
background where it was selected as a nugget (eq. 3). Special tokens, which cover no characters, are
shown by name where they sit. The same per-token records feed the HTML (escaped with ``html.escape``)
and a matplotlib PNG (no browser is needed to draw it).
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Sequence

from multivec.nugget.analysis.selected_tokens import score_documents

NUGGET_GREEN = "#b7f0b1"
LIGHTEST_GREY = 210  # the lowest score's text colour (0 = black for the highest)


def highlight_records(model, rows: Sequence[dict], max_tokens: int) -> list[dict]:
    """Per document ``{id, text, tokens: [{index, token, start, end, special, score, shade, selected}]}``.

    ``shade`` is the score min-max scaled to [0, 1] within the document (1 = the highest score).
    """
    tokenizer = model.processor.source_tokenizer
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(f"source tokenizer {type(tokenizer).__name__} has no offset mapping: "
                         "Fig. 6 needs a fast tokenizer")
    encoded = tokenizer([r["source"] for r in rows], truncation=True, max_length=max_tokens, add_special_tokens=True,
                        return_offsets_mapping=True, return_special_tokens_mask=True)
    scored = score_documents(model, [(r["id"], ids) for r, ids in zip(rows, encoded["input_ids"])])
    records = []
    for row, doc, offsets, special in zip(rows, scored, encoded["offset_mapping"], encoded["special_tokens_mask"]):
        low, high = min(doc.scores), max(doc.scores)
        span = (high - low) or 1.0
        tokens = [{"index": i, "token": tokenizer.convert_ids_to_tokens(token_id), "start": int(start),
                   "end": int(end), "special": bool(is_special), "score": round(score, 6),
                   "shade": round((score - low) / span, 6), "selected": selected}
                  for i, (token_id, (start, end), is_special, score, selected)
                  in enumerate(zip(doc.ids, offsets, special, doc.scores, doc.selected))]
        records.append({"id": row["id"], "text": row["source"], "tokens": tokens})
    return records


def pieces(record: dict) -> list[dict]:
    """The document as consecutive pieces ``{text, token}``: the text between tokens (``token`` None),
    each token's characters (or a special token's name, ``name`` True), in order; the texts of
    the pieces that are not names join to the document."""
    text, cursor, out = record["text"], 0, []
    for tok in record["tokens"]:
        if tok["special"] or tok["end"] <= tok["start"]:
            out.append({"text": tok["token"], "token": tok, "name": True})
            continue
        start = max(tok["start"], cursor)
        if start > cursor:
            out.append({"text": text[cursor:start], "token": None, "name": False})
        if tok["end"] > start:
            out.append({"text": text[start:tok["end"]], "token": tok, "name": False})
        cursor = max(cursor, tok["end"])
    if cursor < len(text):
        out.append({"text": text[cursor:], "token": None, "name": False})
    return out


def _grey(shade: float) -> int:
    return round(LIGHTEST_GREY * (1 - shade))


def highlight_html(records: Sequence[dict], title: str, caption: str) -> str:
    """A self-contained HTML page: one paragraph per document, tokens shaded, nuggets on green."""
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{html.escape(title)}</title>",
             "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.7}"
             f".nugget{{background:{NUGGET_GREEN};border-radius:3px}}.name{{font-size:70%;border:1px solid #ccc;"
             "padding:0 2px;margin:0 2px}.doc{margin-bottom:2em}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>", f"<p>{html.escape(caption)}</p>"]
    for record in records:
        spans = []  # joined without separators: a newline between spans would render as a space
        for piece in pieces(record):
            tok = piece["token"]
            if tok is None:
                spans.append(html.escape(piece["text"]))
                continue
            flags = (("tok", True), ("nugget", tok["selected"]), ("name", piece["name"]))
            classes = " ".join(c for c, on in flags if on)
            grey = _grey(tok["shade"])
            tip = f"{tok['token']} · score {tok['score']:.3f}" + (" · nugget" if tok["selected"] else "")
            spans.append(f'<span class="{classes}" style="color:rgb({grey},{grey},{grey})" '
                         f'title="{html.escape(tip, quote=True)}">{html.escape(piece["text"])}</span>')
        parts.append(f'<div class="doc"><h2>{html.escape(record["id"])}</h2><p>{"".join(spans)}</p></div>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def layout_lines(records: Sequence[dict], width_chars: int) -> list[list[tuple[int, dict]]]:
    """The documents as lines of ``(column, piece)`` for monospace drawing: a header line per document,
    lines wrapped at ``width_chars`` between words (a word longer than a line is cut), a blank line after."""
    lines: list[list[tuple[int, dict]]] = []
    for record in records:
        lines.append([(0, {"text": f"[{record['id']}]", "token": None, "name": False})])
        current, column = [], 0
        for word in _words(pieces(record), width_chars):  # wrap between words, never inside one
            size = sum(len(piece["text"]) for piece in word)
            if column + size > width_chars and column > 0:
                lines.append(current)
                current, column = [], 0
                if word[0]["token"] is None:
                    word = [{**word[0], "text": word[0]["text"].lstrip()}] + word[1:]
            for piece in word:
                if piece["text"]:
                    current.append((column, piece))
                    column += len(piece["text"])
        lines.append(current)
        lines.append([])
    return lines


def plot_highlight(records: Sequence[dict], path: str | os.PathLike, title: str, width_chars: int = 90,
                   font_size: float = 9.0) -> None:
    """The HTML's content drawn with matplotlib: monospace text wrapped at ``width_chars``, same shading."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = layout_lines(records, width_chars)
    char_w, line_h = 0.6 * font_size / 72, 1.9 * font_size / 72  # inches
    fig = plt.figure(figsize=(width_chars * char_w + 0.4, len(lines) * line_h + 0.7))
    ax = fig.add_axes((0.2 / (width_chars * char_w + 0.4), 0, width_chars * char_w / (width_chars * char_w + 0.4), 1))
    ax.set_xlim(0, width_chars)
    ax.set_ylim(-(len(lines) + 0.5), 1.5)
    ax.axis("off")
    ax.text(0, 0.6, title, fontsize=font_size + 2, fontweight="bold", va="center")
    for y, line in enumerate(lines, start=1):
        for column, piece in line:
            tok = piece["token"]
            grey = _grey(tok["shade"]) / 255 if tok is not None else 0.55
            box = ({"facecolor": NUGGET_GREEN, "edgecolor": "none", "pad": 0.8}
                   if tok is not None and tok["selected"] else None)
            ax.text(column, -y, piece["text"], family="monospace", fontsize=font_size * (0.75 if piece["name"] else 1),
                    color=(grey, grey, grey), va="center", ha="left", bbox=box)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130)
    plt.close(fig)


def _words(document_pieces: Sequence[dict], width: int) -> list[list[dict]]:
    """Pieces grouped into words: a new word starts at whitespace and at a special token's name;
    a piece longer than ``width`` is cut, newlines become spaces."""
    words: list[list[dict]] = []
    for piece in document_pieces:
        text = piece["text"].replace("\n", " ")
        for start in range(0, max(len(text), 1), width):
            part = {**piece, "text": text[start:start + width]}
            if not words or piece["name"] or words[-1][-1]["name"] or part["text"][:1].isspace() \
                    or words[-1][-1]["text"][-1:].isspace() or start > 0:
                words.append([part])
            else:
                words[-1].append(part)
    return words
