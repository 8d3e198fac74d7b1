"""Our trained models and results in the tools others use (sentence-transformers, TREC, BEIR).

Modules, one idea each:
- ``folders``: what each kind of trained model folder holds, ``detect_kind``, and ``ExportError`` (names the folder
  and the missing file, or the older layout);
- ``backbones``: a project encoder as sentence-transformers' own ``Transformer`` module;
- ``model_card``: the README.md model card of an exported folder;
- ``distill_export``: distilled students and the structural teacher as ``SentenceTransformer`` folders;
- ``chunked_student``: the modules of a student that reads documents in chunks;
- ``tsdae_export``: TSDAE as a single-vector ``SentenceTransformer``;
- ``nugget_module`` / ``nugget_export``: NUGGET as a ``MultiVectorEncoder`` with ``NuggetSelector``;
- ``token_pooling_export``: the token pooling rows with the library's ``HierarchicalTokenPooling``, and the
  differences to the project's pooling;
- ``subencoder_module`` / ``subencoder_export``: the SubEncoder, one vector per proposition
  (``encode_propositions``);
- ``export``: ``export_model`` for any kind (``python -m multivec export-model``);
- ``ranking_formats``: TREC runs and qrels, and the BEIR layout, of the ranking evaluations
  (``python -m multivec export-run``);
- ``propsegment_formats``: TREC runs and qrels of the sub-sentence encoder's PropSegment retrieval rankings;
- ``propsegment_beir``: PropSegment's retrieval set as BEIR folders, each proposition as its tokens' text;
- ``mteb_tasks``: the ranking tasks and PropSegment as MTEB tasks, and the rankings as MTEB results;
- ``cli``: the two commands.

See docs/interop.md. Importing this package does not import sentence-transformers; the names below load lazily.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "ExportError": "folders", "detect_kind": "folders", "KINDS": "folders",
    "export_model": "export", "export_student": "distill_export", "export_teacher": "distill_export",
    "export_tsdae": "tsdae_export", "export_nugget": "nugget_export", "export_subencoder": "subencoder_export",
    "export_token_pooling": "token_pooling_export", "encode_propositions": "subencoder_module",
    "NuggetSelector": "nugget_module", "PropositionPooling": "subencoder_module",
    "ChunkedTransformer": "chunked_student", "ChunkMeanPooling": "chunked_student",
    "write_run": "ranking_formats", "write_qrels": "ranking_formats", "write_beir": "ranking_formats",
    "run_from_rankings": "ranking_formats", "write_trec": "ranking_formats",
    "write_propsegment_trec": "propsegment_formats", "write_propsegment_beir": "propsegment_beir",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"multivec.interop.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'multivec.interop' has no attribute {name!r}")
