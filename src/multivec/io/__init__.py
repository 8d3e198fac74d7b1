"""Shared by all three works: reading and writing files, checked.

- ``checked_files``: the pipeline's text artifacts (JSON, JSONL, CSV, documents TSV, ``meta.json``), every
  reader naming the file and line of malformed input (``MalformedInputError``), and the one place where text that
  is not text is refused (``decode_line``, ``decode_text``, ``loads_json``: control characters, duplicate JSON keys,
  a leading byte-order mark); its names are exported here;
- ``safe_loading``: weights read without running code (safetensors only), errors naming the file;
- ``resources``: named models and NLTK data resolved on this machine (the offline MiniLM, the data mirror's
  ``models/``, tiny random models for the smoke scale);
- ``markdown_table``: the lines of a Markdown table (header, separator, rows of already-formatted cells),
  a row of the wrong width refused.
"""

from multivec.io.checked_files import (META_FILE, EmptyOutputError, FirstSeen, MalformedInputError,
                                       MalformedJsonError, check_fields, check_minimum, check_text, decode_line,
                                       decode_text, describe_character, iter_jsonl, iter_lines, loads_json,
                                       read_docs_tsv, read_json, read_jsonl, split_lines, write_csv, write_docs_tsv,
                                       write_json, write_jsonl, write_meta, yaml_safe_loader)

__all__ = ["META_FILE", "EmptyOutputError", "FirstSeen", "MalformedInputError", "MalformedJsonError", "check_fields",
           "check_minimum", "check_text", "decode_line", "decode_text", "describe_character", "iter_jsonl",
           "iter_lines", "loads_json", "read_docs_tsv", "read_json", "read_jsonl", "split_lines", "write_csv",
           "write_docs_tsv", "write_json", "write_jsonl", "write_meta", "yaml_safe_loader"]
