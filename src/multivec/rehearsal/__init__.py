"""The rehearsal scale: every rule of the paper DAG on miniature inputs in the upstream formats.

- ``fixture_text``: deterministic English (gensim's Lee corpus) and pseudo-Chinese text for the fixtures;
- ``tiny_models``: tiny randomly initialised models of the paper's architectures, each with a tokenizer in
  its own format, written under ``<mirror>/models/<hub id>/`` (``multivec.io.resources.mirrored_model``);
- ``fixture_mirror``: a data mirror whose files are written exactly as their sources ship them, plus the
  registry overlay with their sha256 (``python -m multivec rehearsal-mirror DIR``);
- ``openai_server``: a deterministic OpenAI-compatible ``/v1/chat/completions`` server on 127.0.0.1 for the
  LLM segmentation client (``python -m multivec.rehearsal.openai_server``).
"""
