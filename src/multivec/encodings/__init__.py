"""Shared by all three works: the encodings artifact, per-document sets of vectors that every encoder writes.

- ``artifact``: the format (``vectors.safetensors`` + ``documents.jsonl`` + ``info.json``), its writer and
  reader, and the encoders' length limits; its names are exported here;
- ``inspector``: what ``python -m multivec inspect`` shows of such a folder.
"""

from multivec.encodings.artifact import (Encodings, encoder_token_limit, read_encodings, resolve_max_tokens,
                                         truncation_summary, write_encodings)

__all__ = ["Encodings", "encoder_token_limit", "read_encodings", "resolve_max_tokens", "truncation_summary",
           "write_encodings"]
