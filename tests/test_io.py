"""Checked IO: malformed input names file and line; documented skips log their count."""

import logging
from pathlib import Path

import pytest

from multivec.io import (MalformedInputError, iter_lines, read_docs_tsv, read_jsonl, write_docs_tsv,
                         write_jsonl)


def test_non_utf8_line_names_file_and_line(tmp_path):
    path = tmp_path / "text.txt"
    path.write_bytes(b"fine\nalso fine\n\xff\xfe broken\n")
    with pytest.raises(MalformedInputError, match=r"text\.txt:3: not valid UTF-8") as info:
        list(iter_lines(path))
    assert info.value.line == 3 and info.value.path == str(path)


def test_bad_jsonl_line_names_file_and_line(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2,}\n', encoding="utf-8")
    with pytest.raises(MalformedInputError, match=r"rows\.jsonl:3: JSONL line does not parse"):
        read_jsonl(path)


def test_jsonl_line_that_is_not_an_object(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(MalformedInputError, match=r"rows\.jsonl:2: expected a JSON object, got list"):
        read_jsonl(path)


def test_jsonl_round_trip_keeps_unicode(tmp_path):
    rows = [{"id": "a", "text": "目录"}, {"id": "b", "text": "x\ty"}]
    assert write_jsonl(tmp_path / "out" / "rows.jsonl", rows) == 2
    assert read_jsonl(tmp_path / "out" / "rows.jsonl") == rows
    assert "目录" in (tmp_path / "out" / "rows.jsonl").read_text(encoding="utf-8")


def test_empty_document_names_file_and_line(tmp_path):
    path = tmp_path / "docs.txt"
    path.write_text("d1\tsome text\nd2\t   \nd3\tmore\n", encoding="utf-8")
    with pytest.raises(MalformedInputError, match=r"docs\.txt:2: empty document 'd2'"):
        read_docs_tsv(path)


def test_empty_documents_skipped_with_logged_count(tmp_path, caplog):
    path = tmp_path / "docs.txt"
    path.write_text("d1\tsome text\nd2\t\nd3\tmore\nd4\t \n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="multivec.io"):
        docs = read_docs_tsv(path, on_empty="skip")
    assert docs == {"d1": "some text", "d3": "more"}
    assert "skipped 2 empty documents" in caplog.text


def test_docs_tsv_missing_tab_and_duplicate_id(tmp_path):
    path = tmp_path / "docs.txt"
    path.write_text("d1\ttext\nno tab here\n", encoding="utf-8")
    with pytest.raises(MalformedInputError, match=r"docs\.txt:2: expected 'id<TAB>text'"):
        read_docs_tsv(path)
    path.write_text("d1\ttext\nd1\tagain\n", encoding="utf-8")
    with pytest.raises(MalformedInputError, match=r"docs\.txt:2: duplicate document id 'd1'"):
        read_docs_tsv(path)
    with pytest.raises(ValueError, match="on_empty"):
        read_docs_tsv(path, on_empty="ignore")


def test_docs_tsv_round_trip_flattens_whitespace(tmp_path):
    write_docs_tsv(tmp_path / "docs.txt", {"a": "two\nlines\tand tab", "b": "plain"})
    assert read_docs_tsv(tmp_path / "docs.txt") == {"a": "two lines and tab", "b": "plain"}


def test_check_minimum_fails_on_zero_and_warns_below_the_minimum(caplog):
    from multivec.io import EmptyOutputError, check_minimum

    with pytest.raises(EmptyOutputError, match=r"a\.txt, b\.txt: no queries built \(0\)"):
        check_minimum("queries", 0, None, ["a.txt", "b.txt"])
    warnings: list[str] = []
    with caplog.at_level(logging.WARNING):
        check_minimum("queries", 94, 120, "wiki.valid.tokens", warnings)
        check_minimum("queries", 121, 120, "wiki.valid.tokens", warnings)
    assert warnings == ["wiki.valid.tokens: only 94 queries, below the configured minimum of 120 "
                        "(a source file may have shrunk or changed)"]
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == warnings


def test_meta_sidecar_is_written_and_inspectable(tmp_path):
    import io

    from multivec.inspection import inspect_path
    from multivec.io import read_json, write_meta

    path = write_meta(tmp_path / "rr", "rr_task", {"wikitext": [tmp_path / "valid.txt"]},
                      {"articles": 122, "queries": 121}, ["a warning"], min_queries=120)
    assert path == tmp_path / "rr" / "meta.json"
    meta = read_json(path)
    assert meta["counts"] == {"articles": 122, "queries": 121} and meta["warnings"] == ["a warning"]
    assert meta["inputs"] == {"wikitext": [str(tmp_path / "valid.txt")]} and meta["min_queries"] == 120
    out = io.StringIO()
    inspect_path(path, out=out)
    assert "queries" in out.getvalue() and "121" in out.getvalue()


def test_check_fields_names_the_key_and_kind():
    from multivec.io import check_fields

    spec = {"id": "string", "n": "integer", "x": "number", "text": "text", "ids": "strings", "meta": "object"}
    good = {"id": "a", "n": 3, "x": 0.5, "text": "t", "ids": ["a"], "meta": {}}
    check_fields(good, spec, "f.jsonl", 4)  # passes
    cases = [({"id": None}, r"field 'id' must be a string, got None"),
             ({"n": True}, r"field 'n' must be an integer, got True"),
             ({"x": float("inf")}, r"field 'x' must be a finite number, got inf"),
             ({"text": "  "}, r"field 'text' must be a non-empty string, got '  '"),
             ({"ids": ["a", 1]}, r"field 'ids' must be a list of strings, got \['a', 1\]"),
             ({"meta": []}, r"field 'meta' must be an object, got \[\]")]
    for change, message in cases:
        with pytest.raises(MalformedInputError, match=r"^f\.jsonl:4: " + message):
            check_fields({**good, **change}, spec, "f.jsonl", 4)
    with pytest.raises(MalformedInputError, match=r"^f\.jsonl:4: missing field\(s\) n, meta$"):
        check_fields({k: v for k, v in good.items() if k not in ("n", "meta")}, spec, "f.jsonl", 4)


def test_first_seen_names_both_lines():
    from multivec.io import FirstSeen

    ids = FirstSeen("docs.txt", "document id")
    ids.add("a", 1)
    ids.add("b", 2)
    assert "a" in ids and len(ids) == 2
    with pytest.raises(MalformedInputError, match=r"^docs\.txt:7: duplicate document id 'a' \(first on line 1\)$"):
        ids.add("a", 7)


def test_read_json_names_file_and_line_and_is_still_a_json_error(tmp_path):
    import json

    from multivec.io import read_json

    path = tmp_path / "meta.json"
    path.write_text('{\n  "a": 1\n  "b": 2\n}\n', encoding="utf-8")
    with pytest.raises(json.JSONDecodeError) as info:  # callers that catch the standard error still do
        read_json(path)
    assert isinstance(info.value, MalformedInputError) and info.value.line == 3
    assert str(info.value) == f"{path}:3: JSON does not parse: Expecting ',' delimiter (column 3)"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(MalformedInputError, match=r"meta\.json: not valid UTF-8 \(invalid start byte at byte 7\)"):
        read_json(path)


def test_yaml_files_parse_with_libyaml_to_the_same_objects():
    """Every Snakemake start reads the config and claims files (each SLURM job twice): 0.26 s with PyYAML's
    pure-Python parser, 0.04 s with libyaml's, which must give the same objects."""
    import yaml

    from multivec.io import yaml_safe_loader

    assert yaml.__with_libyaml__ and yaml_safe_loader() is yaml.CSafeLoader
    files = sorted((Path(__file__).resolve().parents[1] / "config").glob("*.yaml"))
    assert len(files) >= 5 and any(path.name == "claims.yaml" for path in files)
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert yaml.load(text, Loader=yaml_safe_loader()) == yaml.safe_load(text), path.name
