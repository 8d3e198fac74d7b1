"""``python -m multivec inspect PATH``: say what a pipeline artifact is and show what is in it.

This module only dispatches: ``multivec.inspection.registry`` recognises the artifact and runs
its inspector, which lives beside the module that writes the artifact (see
``multivec.inspection``). Kept here for callers: ``inspect_path``, ``detect``, ``InspectError``,
and the length statistics ``length_summary`` / ``text_field_stats`` that builders log.
"""

from __future__ import annotations

from multivec.inspection.common import InspectError, format_summary, length_summary, text_field_stats
from multivec.inspection.registry import detect, inspect_path, inspectors, supported_types

__all__ = ["InspectError", "detect", "format_summary", "inspect_path", "inspectors", "length_summary",
           "supported_types", "text_field_stats"]
