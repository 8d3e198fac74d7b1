"""``python -m multivec inspect PATH``: what a pipeline artifact is and what is in it.

- ``registry``: the ``@inspector`` decorator, ``INSPECTOR_MODULES`` (the one list of modules
  holding inspectors), ``detect`` and ``inspect_path``;
- ``kinds``: ``ARTIFACT_KINDS``, every kind of file or folder the DAG writes and the inspector
  that describes it (a test checks the DAG's outputs against it);
- ``common``: statistics and checked readers shared by the inspectors;
- ``generic``: fallbacks for any JSON, JSONL, CSV, TSV, text, safetensors file or folder.

The inspectors themselves live beside the modules that write the artifacts
(``multivec/nugget/inspector.py``, ``multivec/tasks/inspector.py``, ...).
"""

from multivec.inspection.common import InspectError, Report, length_summary, text_field_stats
from multivec.inspection.registry import detect, inspect_path, inspector, inspectors, supported_types

__all__ = ["InspectError", "Report", "detect", "inspect_path", "inspector", "inspectors", "length_summary",
           "supported_types", "text_field_stats"]
