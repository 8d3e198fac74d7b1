"""The README.md model card of an exported folder, in sentence-transformers' layout.

sentence-transformers writes a card with YAML front matter (``library_name``, ``pipeline_tag``, ``tags``,
``base_model``) and the sections *Model Details* (type, maximum sequence length, output dimensionality, the
full module architecture), *Usage*, *Training Details* and *Evaluation*; ``write_model_card`` writes that
layout for every exported kind, from what the export knows:

- training data and configuration: the model folder's own ``config.json`` (its settings, as JSON);
- metrics: a metrics JSON (``metrics``, e.g. a row's evaluation file), shown as a table, when given;
- limitations: always the statement that this is a demo model trained for minutes on CPU, and each thing
  the library cannot express for this kind (``cannot_express``), e.g. query-side settings.

The card replaces the generic one ``save`` writes (which knows neither the data nor the limits).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Sequence

DEMO_NOTE = ("This is a **demo model** of a reproduction pipeline (multivec), trained for minutes on CPU at demo "
             "scale, often on a few hundred documents. It is not a production model and not the model of the "
             "paper it reproduces; its numbers are only meaningful next to the other rows of the same pipeline run.")


def _metrics_table(metrics: dict[str, Any]) -> str:
    flat: list[tuple[str, Any]] = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(value, (int, float, str, bool)) or value is None:
            flat.append((prefix, value))

    walk("", metrics)
    rows = ["| Metric | Value |", "|:--|:--|"]
    for key, value in flat:
        shown = f"{value:.4f}" if isinstance(value, float) else str(value)
        rows.append(f"| {key} | {shown.replace('|', '/')} |")
    return "\n".join(rows)


def write_model_card(dest: str | os.PathLike, *, kind: str, title: str, model_class: str, architecture: str,
                     max_seq_length: int | None, dimension: int | None, source: str | os.PathLike,
                     base_model: str | None, training_data: str, configuration: dict[str, Any],
                     usage: str, cannot_express: Sequence[str] = (), metrics: dict[str, Any] | None = None,
                     metrics_source: str | None = None, pipeline_tag: str = "sentence-similarity",
                     extra_tags: Sequence[str] = ()) -> Path:
    """Write ``dest/README.md`` (see the module docstring); returns its path."""
    tags = ["sentence-transformers", "multivec", f"multivec-{kind}", "demo-model", *extra_tags]
    front = ["---", "library_name: sentence-transformers", f"pipeline_tag: {pipeline_tag}", "tags:"]
    front += [f"- {tag}" for tag in tags]
    if base_model:
        front.append(f"base_model: {base_model}")
    front.append("---")
    lines = [*front, "", f"# {title}", "",
             f"Exported by `python -m multivec export-model` from the trained {kind} folder `{source}`.", "",
             "## Model Details", "", "### Model Description",
             f"- **Model Type:** {model_class}",
             f"- **Maximum Sequence Length:** {max_seq_length if max_seq_length else 'see the architecture'} tokens",
             f"- **Output Dimensionality:** {dimension if dimension else 'see the architecture'} dimensions",
             f"- **Base model:** {base_model or 'a tiny random model (tests)'}", "",
             "### Full Model Architecture", "", "```", architecture, "```", "",
             "## Usage", "", "```python", usage.strip(), "```", "",
             "## Training Details", "", "### Training Data", "", training_data, "",
             "### Training Configuration", "",
             "The `model` section of the trained folder's `config.json`:", "",
             "```json", json.dumps(configuration, indent=2, sort_keys=True, default=str), "```", "",
             "## Evaluation", ""]
    if metrics:
        lines += [f"Metrics from `{metrics_source}`:" if metrics_source else "Metrics:", "", _metrics_table(metrics), ""]
    else:
        lines += ["No metrics file was passed to the export (`--metrics`); see the pipeline's results tables.", ""]
    lines += ["## Bias, Risks and Limitations", "", DEMO_NOTE, ""]
    if cannot_express:
        lines += ["### What this folder cannot express", "",
                  "sentence-transformers has no place for the following; they are stated here instead:", ""]
        lines += [f"- {item}" for item in cannot_express]
        lines.append("")
    path = Path(dest) / "README.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def read_metrics(path: str | os.PathLike | None) -> dict[str, Any] | None:
    """A metrics JSON file (an object) as a dict, or None for no path."""
    if path is None:
        return None
    from multivec.io import read_json

    data = read_json(path)
    if not isinstance(data, dict):
        from multivec.interop.folders import ExportError

        raise ExportError(path, "a metrics file must hold a JSON object")
    return data
