"""Inspectors for the student side of document embedding by distillation (Burian 2023, §3.1, §4):

- a trained student ``models/distill/<run>/seed<seed>/`` (``training.py``): the common model view plus its losses,
  combination, heads and length-mask share;
- an embeddings folder ``data/distill/{student/<run>/seed<seed>,student/untrained,concat}/<split>/`` (``embeddings.safetensors`` +
  ``ids.txt`` + ``meta.json``): count, dimension, norms, a few ids.
"""

from __future__ import annotations

from pathlib import Path

from multivec.inspection.common import Report, read_json_checked, short_json
from multivec.inspection.registry import inspector


def _is_student(path: Path) -> bool:
    if not (path.is_dir() and (path / "config.json").is_file() and (path / "model.safetensors").is_file()):
        return False
    try:
        config = read_json_checked(path / "config.json")
    except Exception:  # an unreadable config is the generic model inspector's to report
        return False
    return isinstance(config, dict) and isinstance(config.get("model"), dict) and "student" in config["model"]


@inspector("distill student", "a distilled document student: model.safetensors + config.json {model: {student, "
           "loss}}, metrics.csv, training_summary.json", _is_student, 82)
def inspect_student(path: Path, report: Report) -> None:
    from multivec.nugget.inspector import inspect_model

    inspect_model(path, report)
    config = read_json_checked(path / "config.json")
    loss, student = config["model"].get("loss", {}), config["model"]["student"]
    sides = " + ".join(x for x in (loss.get("structural"), loss.get("contextual")) if x) or "none"
    report.line(f"distillation: losses {sides}, combination {loss.get('combination')} (lambda {loss.get('lam')}), "
                f"backbone {student.get('backbone')}, max_tokens {student.get('max_tokens')}, "
                f"chunk_tokens {student.get('chunk_tokens')}")
    report.line(f"heads: structural {student.get('structural_head')}, contextual {student.get('contextual_head')}, "
                f"teacher {student.get('teacher_head')}; derived: {short_json(config.get('derived', {}), 300)}")
