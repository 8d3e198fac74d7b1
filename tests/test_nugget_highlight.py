"""Fig. 6 (§5.2): per-token scores over the original text, escaped HTML, and the PNG drawn from the same data."""

import html
from html.parser import HTMLParser

import pytest

from multivec.nugget.analysis.highlight import (highlight_html, highlight_records, layout_lines, pieces,
                                                plot_highlight)
from multivec.nugget.configuration import NuggetConfig
from multivec.nugget.modeling import NuggetModel
from multivec.nugget.target_tokenizer import TargetTokenizer

ROWS = [{"id": "doc<1>", "source": 'Tom & Jerry said "<b>hi</b>", and  left.'},
        {"id": "d2", "source": "Natural language processing is fun, and useful."}]


@pytest.fixture(scope="module")
def records():
    bpe = TargetTokenizer.train_bpe([r["source"] for r in ROWS] * 3, 300)
    cfg = NuggetConfig(encoder="tiny-random-bert", architecture="bert_decoder", ratio=0.25, scorer_layer=2,
                       decoder_heads=2, decoder_ffn=64, target_vocab_size=300, target_tokenizer="bpe")
    return highlight_records(NuggetModel.from_backbone(cfg, bpe).eval(), ROWS, max_tokens=64)


def test_records_cover_the_text_and_scale_scores(records):
    for row, record in zip(ROWS, records):
        tokens = record["tokens"]
        assert tokens[0]["token"] == "[CLS]" and tokens[0]["special"] and tokens[-1]["token"] == "[SEP]"
        shades = [t["shade"] for t in tokens]
        assert min(shades) == 0 and max(shades) == 1
        best = max(tokens, key=lambda t: t["score"])
        assert best["shade"] == 1
        assert sum(t["selected"] for t in tokens) >= 1
        # The pieces that are not special-token names rebuild the document exactly.
        assert "".join(p["text"] for p in pieces(record) if not p["name"]) == row["source"]


def test_html_escapes_and_marks_nuggets(records):
    page = highlight_html(records, "Fig. 6 <test>", "caption & more")
    # The document's own markup is text: "<", "b", ">" are separate tokens, each escaped.
    assert "<b>" not in page and "</b>" not in page and html.escape("<") in page and html.escape('"') in page
    assert "doc&lt;1&gt;" in page and "Fig. 6 &lt;test&gt;" in page

    class Spans(HTMLParser):
        def __init__(self):
            super().__init__()
            self.nuggets, self.text, self.open = 0, [], 0

        def handle_starttag(self, tag, attrs):
            if tag == "span" and "nugget" in dict(attrs).get("class", ""):
                self.nuggets += 1

        def handle_data(self, data):
            self.text.append(data)

    parser = Spans()
    parser.feed(page)
    assert parser.nuggets == sum(t["selected"] for r in records for t in r["tokens"])
    assert ROWS[0]["source"] in "".join(parser.text)  # unescaped by the parser, the text is intact


def test_png_is_drawn(records, tmp_path):
    path = tmp_path / "fig6.png"
    plot_highlight(records, path, "Fig. 6", width_chars=30)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 2000


def test_png_layout_wraps_between_words(records):
    width = 16
    lines = layout_lines(records, width)
    texts = ["".join(piece["text"] for _, piece in line if not piece["name"]) for line in lines]
    assert all(sum(len(p["text"]) for _, p in line) <= width for line in lines)
    body = " ".join(t for t in texts if not t.startswith("[doc") and not t.startswith("[d2"))
    assert body.split() == " ".join(r["source"] for r in ROWS).split()  # no word cut across lines
    for line in lines:  # columns advance by the pieces' lengths
        assert all(c2 == c1 + len(p1["text"]) for (c1, p1), (c2, _) in zip(line, line[1:]))
