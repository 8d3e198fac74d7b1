"""Text that is not what the file says it is: every reader of input text refuses it at reading, naming the
file and line (and column or character), or handles it explicitly, in the one place all readers share
(``multivec.io.checked_files``: ``decode_line``, ``decode_text``, ``loads_json``; ``multivec.data.language``
for the language of parallel text).

Families, each over the readers it applies to:

- language: each side of parallel text (and English documents) checked positively for its own script;
- duplicate JSON keys (``json`` keeps the last value silently);
- control characters (C0 but tab/LF/CR, DEL, lone surrogates from JSON escapes), raw or escaped;
- byte-order marks: a leading UTF-8 BOM is dropped with a WARNING (the same result as without it), a UTF-16
  file is named as such, a BOM glued inside ``docs.txt`` (concatenated files) is refused at the id;
- line ends: CRLF reads as LF, and U+2028/U+0085 inside a line do not shift line numbers;
- what is kept on purpose (tab, C1 controls, soft hyphen, zero-width and bidi marks, private use, surrogate
  pairs): real text has them; the real mirror data reads exactly as a plain decode does.
"""

import io
import json
import logging
import re
import tarfile

import pytest

from multivec.data.corpora import read_debian_reference_pairs
from multivec.data.language import LanguageCheck
from multivec.data.translation_corpus import read_news_commentary_tsv, read_wmt19_dev, read_wmt_sgm_files
from multivec.data.wikitext import parse_wikitext
from multivec.io import (MalformedInputError, decode_text, iter_jsonl, iter_lines, loads_json, read_docs_tsv,
                         read_json, split_lines)
from multivec.tasks.paraphrase_identification import read_parabank
from multivec.tasks.ranking_task import RankingTask

ENGLISH = ["The cat sat on the mat and looked at the door.", "It was a cold day in the north of the country.",
           "This is the end of the story, and that is all."]
CHINESE = ["猫坐在垫子上，看着门。", "那是该国北部寒冷的一天。", "这就是故事的结尾，仅此而已。"]
FOREIGN = {
    "russian": ["Кошка сидела на коврике и смотрела на дверь.", "Это был холодный день на севере страны.",
                "Вот и конец истории, и это всё."],
    "arabic": ["جلست القطة على الحصيرة ونظرت إلى الباب.", "كان يوما باردا في شمال البلاد.", "هذه نهاية القصة."],
    "greek": ["Η γάτα κάθισε στο χαλάκι και κοίταξε την πόρτα.", "Ήταν μια κρύα μέρα στον βορρά της χώρας.",
              "Αυτό είναι το τέλος της ιστορίας."],
    "chinese": CHINESE,
    "japanese": ["猫はマットの上に座ってドアを見ていた。", "それは国の北部の寒い日だった。",
                 "これで話はおしまいです。"],
    "korean": ["고양이가 매트 위에 앉아 문을 보았다.", "그 나라 북쪽의 추운 날이었다.", "이것이 이야기의 끝이다."],
    "english": ENGLISH,
}


def write(folder, name, text, binary=False):
    path = folder / name
    if binary:
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


def message(error, folder):
    return str(error.value).replace(str(folder) + "/", "")


def news_commentary(folder, en, zh):
    path = write(folder, "nc.tsv", "".join(f"{e}\t{z}\n" for e, z in zip(en, zh)))
    return list(read_news_commentary_tsv(path))


def debian_pairs(folder, en, zh):
    rows = [{"doc": "ch1", "i": i, "en": e, "zh": z} for i, (e, z) in enumerate(zip(en, zh))]
    path = write(folder, "pairs.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return read_debian_reference_pairs(path)


def sgm(kind, segments):
    body = "".join(f'<seg id="{i}">{text}</seg>\n' for i, text in enumerate(segments, start=1))
    return f'<{kind} setid="s" srclang="en" trglang="zh">\n<doc sysid="ref" docid="d1" genre="news">\n{body}</doc>\n' \
           f'</{kind}>\n'


def wmt_files(folder, en, zh):
    return read_wmt_sgm_files(write(folder, "src.en.sgm", sgm("srcset", en)),
                              write(folder, "ref.zh.sgm", sgm("refset", zh)))


def ranking_docs(folder, en, _zh=None):
    docs = "".join(f"L{i}\t{text}\n" for i, text in enumerate(en))
    write(folder, "docs.txt", docs)
    write(folder, "task.jsonl", '{"source": "L0", "candidates": ["L1", "L2"], "answer": 0}\n')
    return RankingTask.load(folder)


# ---------------------------------------------------------------- language of each side

PARALLEL = {"news-commentary": (news_commentary, "nc.tsv", "en (first column)", "zh (second column)", 1),
            "debian-pairs": (debian_pairs, "pairs.jsonl", "en", "zh", 1),
            "wmt-sgm": (wmt_files, None, "segment", "segment", 3)}
SCRIPT = {"russian": "Cyrillic letters", "arabic": "Arabic letters", "greek": "Greek letters",
          "chinese": r"CJK \(Chinese\) characters", "japanese": "Japanese kana|CJK", "korean": "Korean hangul"}


@pytest.mark.parametrize("reader", list(PARALLEL))
@pytest.mark.parametrize("language", ["russian", "arabic", "greek", "chinese", "japanese", "korean"])
def test_english_side_in_another_language_is_refused(tmp_path, reader, language):
    read, name, side, _, line = PARALLEL[reader]
    with pytest.raises(MalformedInputError) as error:
        read(tmp_path, FOREIGN[language], CHINESE)
    shown = message(error, tmp_path)
    where = re.escape(name or "src.en.sgm")
    assert re.match(rf"{where}:{line}: {re.escape(side)} is not English: 3 of 3 .* \(the first is mostly "
                    rf"({SCRIPT[language]})", shown), shown


@pytest.mark.parametrize("reader", list(PARALLEL))
@pytest.mark.parametrize("language, what", [("japanese", "is Japanese or Korean"),
                                            ("korean", r"has no Chinese characters \(mostly Korean hangul\)"),
                                            ("russian", r"has no Chinese characters \(mostly Cyrillic letters\)"),
                                            ("english", "has no Chinese characters"),
                                            ("arabic", r"has no Chinese characters \(mostly Arabic letters\)")])
def test_chinese_side_in_another_language_is_refused(tmp_path, reader, language, what):
    read, name, _, side, line = PARALLEL[reader]
    with pytest.raises(MalformedInputError) as error:
        read(tmp_path, ENGLISH, FOREIGN[language])
    shown = message(error, tmp_path)
    where = re.escape(name or "ref.zh.sgm")
    assert re.match(rf"{where}:{line}: {re.escape(side)} is not Chinese: 3 of 3 .* \(the first {what}", shown), shown


@pytest.mark.parametrize("language", ["russian", "greek", "chinese", "korean"])
def test_ranking_documents_in_another_language_are_refused(tmp_path, language):
    # three short documents: under the function-word check's 1000 words, so only the per-text check can see it
    with pytest.raises(MalformedInputError, match=r"docs\.txt:1: documents is not English: 3 of 3"):
        ranking_docs(tmp_path, FOREIGN[language])


def test_chinese_with_kana_or_cyrillic_mixed_in_is_refused_per_text():
    check = LanguageCheck("x", "zh")
    assert check.reason("日本語の文章です") and check.reason("Путин Владимир (普京)")
    assert LanguageCheck("x", "en").reason("Владимир Путин (Vladimir)")


@pytest.mark.parametrize("en, zh", [
    ("Tokyo (東京) is the capital of Japan.", "东京是日本的首都。"),
    ("Use apt-get install to add a package.", "使用 apt-get install 安装软件包。"),
    ("Café society in Zürich and Ærø.", "苏黎世的咖啡馆社会。"),
    ("The ＡＢＣ company, full-width.", "ＡＢＣ公司。"),
    ("The angle α is greater than β here.", "角 α 大于 β。"),
    ("2023-02-04 11:59:01, 42 %", "2023-02-04 11:59:01，42 %"),
], ids=["quoted-name", "commands", "accented-latin", "full-width", "greek-symbols", "no-letters"])
def test_real_looking_mixed_text_is_accepted(tmp_path, en, zh):
    assert len(news_commentary(tmp_path, [en] * 3, [zh] * 3)[0][1]) == 3
    assert len(debian_pairs(tmp_path, [en] * 3, [zh] * 3)) == 3


# ---------------------------------------------------------------- duplicate JSON keys

def jsonl_reader(name):
    def read(folder, text):
        return list(iter_jsonl(write(folder, name, text)))
    return read


def task_reader(folder, text):
    write(folder, "docs.txt", "L0\tquery text\nR0\tanswer text\nR1\tother text\n")
    write(folder, "task.jsonl", text)
    return RankingTask.load(folder)


def pairs_reader(folder, text):
    return read_debian_reference_pairs(write(folder, "pairs.jsonl", text))


def json_reader(folder, text):
    return read_json(write(folder, "propositions.dev.json", text))


@pytest.mark.parametrize("read, text, expected", [
    pytest.param(task_reader, '{"source": "L0", "candidates": ["R0", "R1"], "answer": 0}\n'
                              '{"source": "R0", "candidates": ["L0", "R1"], "answer": 0, "answer": 1}\n',
                 r"task\.jsonl:2: duplicate key 'answer' in one JSON object .*\(column 59\)", id="task-jsonl"),
    pytest.param(pairs_reader, '{"doc": "c", "i": 0, "en": "Hello there.", "zh": "你好。", "en": "Bye."}\n',
                 r"pairs\.jsonl:1: duplicate key 'en' in one JSON object \(json would keep only the last value\) "
                 r"\(column 57\)", id="debian-pairs"),
    pytest.param(jsonl_reader("rows.jsonl"), '{"a": {"b": 1, "b": 2}}\n', r"rows\.jsonl:1: duplicate key 'b'",
                 id="nested-object"),
    pytest.param(jsonl_reader("rows.jsonl"), '{"a": 1, "\\u0061": 2}\n', r"rows\.jsonl:1: duplicate key 'a' .*"
                                                                          r"\(column 10\)", id="escaped-spelling"),
    pytest.param(json_reader, '[\n {\n  "sentence_id": 1,\n  "text": "x",\n  "sentence_id": 2\n }\n]\n',
                 r"propositions\.dev\.json:5: duplicate key 'sentence_id' .*\(column 3\)", id="json-pretty-printed"),
    pytest.param(json_reader, '{"a": [{"k": 1}, {"k": 2, "x": {"k": 3, "k": 4}}]}',
                 r"propositions\.dev\.json:1: duplicate key 'k' .*\(column 41\)", id="json-deep"),
])
def test_duplicate_json_key_names_file_line_and_key(tmp_path, read, text, expected):
    with pytest.raises(MalformedInputError) as error:
        read(tmp_path, text)
    assert re.match(expected, message(error, tmp_path)), message(error, tmp_path)


def test_read_json_duplicate_is_still_a_json_decode_error(tmp_path):
    with pytest.raises(json.JSONDecodeError):
        json_reader(tmp_path, '{"a": 1, "a": 2}')


@pytest.mark.parametrize("text", ['[{"k": 1}, {"k": 2}]', '{"k": {"k": {"k": 1}}}', '{"a": "k", "k": "a"}',
                                  '{"a": "\\"k\\": 1", "k": 2}', '{"a": ["k", {"a": 1}], "b": {"a": 2}}'])
def test_same_key_in_different_objects_is_fine(text):
    assert loads_json(text, "x.json") == json.loads(text)


# ---------------------------------------------------------------- control characters

CONTROLS = [("\x00", "U+0000 (NUL)"), ("\x01", "U+0001 (SOH)"), ("\x08", "U+0008 (BS)"), ("\x0b", "U+000B (VT)"),
            ("\x0c", "U+000C (FF)"), ("\x1b", "U+001B (ESC)"), ("\x1f", "U+001F (US)"), ("\x7f", "U+007F (DEL)")]


def line_readers():
    """(id, read(folder, bad_text) -> result, where: the file:line the message must name)."""
    def docs(folder, bad):
        write(folder, "docs.txt", f"L0\tquery text\nR0\tanswer {bad} text\nR1\tother text\n")
        write(folder, "task.jsonl", '{"source": "L0", "candidates": ["R0", "R1"], "answer": 0}\n')
        return RankingTask.load(folder)

    def nc(folder, bad):
        return news_commentary(folder, ["A first line here.", f"The second {bad} line."], ["第一行。", "第二行。"])

    def parabank(folder, bad):
        return read_parabank(write(folder, "parabank.tsv", f"a b .\tc d .\ne f {bad} .\tg h .\n"))

    def wikitext(folder, bad):
        return parse_wikitext(write(folder, "wiki.tokens", f" = Title = \n the text {bad} here . \n"))

    def wmt(folder, bad):
        return wmt_files(folder, ["One.", f"Two {bad}."], ["一。", "二。"])

    def wmt_tar(folder, bad):
        path = folder / "dev.tgz"
        members = {"dev/s.en.sgm": sgm("srcset", ["One.", f"Two {bad}."]),
                   "dev/r.zh.sgm": sgm("refset", ["一。", "二。"])}
        with tarfile.open(path, "w:gz") as archive:
            for name, text in members.items():
                data = text.encode()
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
        return read_wmt19_dev(path, [("s", "dev/s.en.sgm", "dev/r.zh.sgm")])

    def jsonl_raw(folder, bad):
        return list(iter_jsonl(write(folder, "rows.jsonl", '{"a": 1}\n' + f'{{"t": "x"}}{bad}\n')))

    return [("docs-txt", docs, "docs.txt:2"), ("news-commentary", nc, "nc.tsv:2"),
            ("parabank", parabank, "parabank.tsv:2"), ("wikitext", wikitext, "wiki.tokens:2"),
            ("wmt-sgm", wmt, "src.en.sgm:4"),
            ("wmt-dev-tar", wmt_tar, "dev.tgz:dev/s.en.sgm:4"), ("jsonl-outside-string", jsonl_raw, "rows.jsonl:2")]


@pytest.mark.parametrize("char, shown", CONTROLS, ids=[c[1].split()[0] for c in CONTROLS])
@pytest.mark.parametrize("reader_id, read, where", line_readers(), ids=[r[0] for r in line_readers()])
def test_control_character_is_refused_at_reading(tmp_path, reader_id, read, where, char, shown):
    with pytest.raises(MalformedInputError) as error:
        read(tmp_path, char)
    text = message(error, tmp_path)
    assert text.startswith(f"{where}: control character {shown} at column "), text


@pytest.mark.parametrize("escape, shown", [("\\u0000", "U+0000 (NUL)"), ("\\u001b", "U+001B (ESC)"),
                                           ("\\b", "U+0008 (BS)"), ("\\f", "U+000C (FF)"), ("\\u007F", "U+007F (DEL)"),
                                           ("\\ud800", "U+D800 (a lone surrogate"),
                                           ("\\udc00x", "U+DC00 (a lone surrogate"),
                                           ("\\ude00\\ud83d", "U+DE00 (a lone surrogate")])
@pytest.mark.parametrize("read, where", [(pairs_reader, "pairs.jsonl:2"),
                                         (jsonl_reader("rows.jsonl"), "rows.jsonl:2"),
                                         (json_reader, "propositions.dev.json:2")],
                         ids=["debian-pairs", "jsonl", "json"])
def test_escaped_control_character_in_json_is_refused(tmp_path, read, where, escape, shown):
    good = '{"doc": "c", "i": 0, "en": "Hello there.", "zh": "你好。"}'
    bad = '{"doc": "c", "i": 1, "en": "Bye ' + escape + ' now.", "zh": "再见。"}'
    text = f"{good}\n{bad}\n" if read is not json_reader else f"[{good},\n{bad}]"
    with pytest.raises(MalformedInputError) as error:
        read(tmp_path, text)
    shown_message = message(error, tmp_path)
    assert shown_message.startswith(f"{where}: control character {shown}"), shown_message
    assert "string that starts here: not text (column 28)" in shown_message, shown_message


def test_raw_control_character_in_json_file_names_line_and_column(tmp_path):
    with pytest.raises(MalformedInputError, match=r"x\.json:2: control character U\+0001 \(SOH\): not text "
                                                  r"\(column 7\)"):
        read_json(write(tmp_path, "x.json", '{"a":\n "bad \x01"}'))


@pytest.mark.parametrize("text", [
    "tab\tinside", "carriage\rreturn inside", "C1 \x85 \x92 \x9d controls", "soft\xadhyphen", "zero\u200bwidth",
    "joiner\u200d\u200c", "marks \u200e\u200f", "override \u202e\u202d\u202c", "isolates \u2066\u2069",
    "private \uf0b7 \uf0a7", "line\u2028separator", "nbsp\xa0and\ufeffzwnbsp inside", "emoji \U0001f600",
], ids=["tab", "cr-inside", "c1", "soft-hyphen", "zwsp", "zwj-zwnj", "lrm-rlm", "bidi-override", "bidi-isolate",
        "private-use", "u2028", "nbsp-feff-inside", "emoji"])
def test_invisible_but_real_characters_are_kept(tmp_path, text):
    """Real corpora hold these (the NUGGET docs.txt has U+0092, U+009D, U+00AD, U+F0B7); they are kept as they are."""
    path = write(tmp_path, "t.txt", f"first\n{text}\nlast\n")
    assert [t for _, t in iter_lines(path)] == ["first", text, "last"]
    row = {"t": text}
    for ensure_ascii in (True, False):
        path = write(tmp_path, "r.jsonl", json.dumps(row, ensure_ascii=ensure_ascii) + "\n")
        assert [r for _, r in iter_jsonl(path)] == [row]
        assert read_json(write(tmp_path, "r.json", json.dumps([row], ensure_ascii=ensure_ascii))) == [row]


# ---------------------------------------------------------------- byte-order marks

BOM = "\ufeff"


def bom_cases():
    def docs(folder, bom):
        write(folder, "docs.txt", f"{bom}L0\tquery text\nR0\tanswer text\nR1\tother text\n")
        write(folder, "task.jsonl", '{"source": "L0", "candidates": ["R0", "R1"], "answer": 0}\n')
        task = RankingTask.load(folder)
        return task.documents, task.queries

    def task(folder, bom):
        write(folder, "docs.txt", "L0\tquery text\nR0\tanswer text\nR1\tother text\n")
        write(folder, "task.jsonl", f'{bom}{{"source": "L0", "candidates": ["R0", "R1"], "answer": 0}}\n')
        return RankingTask.load(folder).queries

    def pairs(folder, bom):
        return read_debian_reference_pairs(write(folder, "pairs.jsonl", bom + json.dumps(
            {"doc": "c", "i": 0, "en": "Hello there.", "zh": "你好。"}, ensure_ascii=False) + "\n"))

    def nc(folder, bom):
        return news_commentary(folder, [f"{bom}The first line."], ["第一行。"])

    def parabank(folder, bom):
        return read_parabank(write(folder, "parabank.tsv", f"{bom}a b .\tc d .\n"))

    def wikitext(folder, bom):
        return parse_wikitext(write(folder, "wiki.tokens", f"{bom} = Title = \n the text here . \n"))

    def wmt(folder, bom):
        return read_wmt_sgm_files(write(folder, "src.en.sgm", bom + sgm("srcset", ["One."])),
                                  write(folder, "ref.zh.sgm", bom + sgm("refset", ["一。"])))

    def json_file(folder, bom):
        return read_json(write(folder, "x.json", bom + '{"a": [1, 2]}'))

    return [("docs-txt", docs, "docs.txt"), ("task-jsonl", task, "task.jsonl"), ("debian-pairs", pairs, "pairs.jsonl"),
            ("news-commentary", nc, "nc.tsv"), ("parabank", parabank, "parabank.tsv"),
            ("wikitext", wikitext, "wiki.tokens"), ("wmt-sgm", wmt, "src.en.sgm"), ("json", json_file, "x.json")]


@pytest.mark.parametrize("case_id, read, name", bom_cases(), ids=[c[0] for c in bom_cases()])
def test_leading_byte_order_mark_is_dropped_with_a_warning(tmp_path, caplog, case_id, read, name):
    (tmp_path / "plain").mkdir()
    (tmp_path / "bom").mkdir()
    expected = read(tmp_path / "plain", "")
    with caplog.at_level(logging.WARNING):
        assert read(tmp_path / "bom", BOM) == expected
    warnings = [r.getMessage() for r in caplog.records if "byte-order mark" in r.getMessage()]
    assert any(w.startswith(str(tmp_path / "bom" / name)) for w in warnings), warnings


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
@pytest.mark.parametrize("read, name", [(lambda p: list(iter_lines(p)), "docs.txt"),
                                        (lambda p: list(read_news_commentary_tsv(p)), "nc.tsv"),
                                        (lambda p: read_parabank(p), "parabank.tsv"),
                                        (read_json, "x.json")],
                         ids=["iter-lines", "news-commentary", "parabank", "json"])
def test_utf16_file_is_named_as_utf16(tmp_path, read, name, encoding):
    text = '{"a": 1}' if name.endswith(".json") else "The first line.\t第一行。\n"
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    path = write(tmp_path, name, data, binary=True)
    with pytest.raises(MalformedInputError, match=rf"{re.escape(name)}(:1)?: not valid UTF-8: the file starts with a "
                                                  r"UTF-16 byte-order mark"):
        read(path)


@pytest.mark.parametrize("docs, expected", [
    ("L0\tquery text\n\ufeffR0\tanswer text\nR1\tother text\n",
     r"docs\.txt:2: document id '\\ufeffR0' holds the invisible character U\+FEFF \(ZERO WIDTH NO-BREAK SPACE\) "
     r"at column 1"),
    ("L0\tquery text\nR0\u200b\tanswer text\nR1\tother text\n",
     r"docs\.txt:2: document id 'R0\\u200b' holds the invisible character U\+200B \(ZERO WIDTH SPACE\) at column 3"),
    ("L0\tquery text\nR0 \tanswer text\nR1\tother text\n", r"docs\.txt:2: document id 'R0 ' has space before or after"),
    ("L0\tquery text\n R0\tanswer text\nR1\tother text\n", r"docs\.txt:2: document id ' R0' has space before or after"),
], ids=["bom-of-a-glued-file", "zero-width", "trailing-space", "leading-space"])
def test_document_id_that_only_looks_right_is_refused_at_docs_txt(tmp_path, docs, expected):
    # before: "task.jsonl:1: candidate 'R0' is not in docs.txt", naming the wrong file
    write(tmp_path, "task.jsonl", '{"source": "L0", "candidates": ["R0", "R1"], "answer": 0}\n')
    write(tmp_path, "docs.txt", docs)
    with pytest.raises(MalformedInputError) as error:
        RankingTask.load(tmp_path)
    assert re.match(expected, message(error, tmp_path)), message(error, tmp_path)


# ---------------------------------------------------------------- line ends

@pytest.mark.parametrize("case_id, read, name", bom_cases(), ids=[c[0] for c in bom_cases()])
def test_crlf_files_read_as_lf(tmp_path, monkeypatch, case_id, read, name):
    (tmp_path / "lf").mkdir()
    (tmp_path / "crlf").mkdir()
    expected = read(tmp_path / "lf", "")
    plain_write = write

    def crlf_write(folder, file_name, text, binary=False):
        assert not binary
        return plain_write(folder, file_name, text.replace("\n", "\r\n"), binary)

    monkeypatch.setitem(globals(), "write", crlf_write)  # the readers above write through the module's ``write``
    assert read(tmp_path / "crlf", "") == expected
    assert b"\r\n" in (tmp_path / "crlf" / name).read_bytes() or name == "x.json"


def test_unicode_line_separators_do_not_shift_line_numbers(tmp_path):
    """``str.splitlines`` splits at U+2028 and U+0085 too: an SGM file's line numbers would not be the file's."""
    text = sgm("srcset", ["One\u2028two.", "Three\x85four."]).replace("</doc>", '<seg id="9">open\n</doc>')
    with pytest.raises(MalformedInputError, match=r"src\.en\.sgm:5: unparsable <seg> line"):
        read_wmt_sgm_files(write(tmp_path, "src.en.sgm", text), write(tmp_path, "ref.zh.sgm", sgm("refset", ["一。"])))
    assert split_lines("a\u2028b\r\nc\x85d\n\ne") == ["a\u2028b", "c\x85d", "", "e"]


def test_bad_utf8_in_a_whole_file_names_its_line(tmp_path):
    with pytest.raises(MalformedInputError, match=r"s\.sgm:3: not valid UTF-8 \(invalid start byte at byte 4\)"):
        decode_text(b"one\ntwo\nthre\xff\n", tmp_path / "s.sgm")


# ---------------------------------------------------------------- the real mirror reads as a plain decode does

def test_real_mirror_files_read_exactly_as_a_plain_decode(mirror, caplog):
    """Nothing here changes what real data reads as: every text file's lines, every JSONL row and JSON file equal a
    plain UTF-8 decode + ``json.loads``, with no warning."""
    files = [p for p in sorted(mirror.rglob("*")) if p.suffix in (".txt", ".jsonl", ".json") and "nltk" not in str(p)]
    assert files
    with caplog.at_level(logging.WARNING):
        for path in files:
            raw = path.read_bytes().decode("utf-8")
            if path.suffix == ".json":
                assert read_json(path) == json.loads(raw), path
                continue
            lines = raw.split("\n")
            lines = lines[:-1] if lines[-1] == "" else lines
            assert [t for _, t in iter_lines(path)] == [t.rstrip("\r") for t in lines], path
            if path.suffix == ".jsonl":
                assert [r for _, r in iter_jsonl(path)] == [json.loads(t) for t in lines if t.strip()], path
            if path.name == "docs.txt":
                docs = read_docs_tsv(path, on_empty="keep")
                plain = dict(t.split("\t", 1) for t in lines if t.strip())
                assert docs == {i: body if body.strip() else "" for i, body in plain.items()}, path
    assert not [r for r in caplog.records if "byte-order mark" in r.getMessage()]
