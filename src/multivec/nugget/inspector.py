"""Inspectors for what NUGGET training writes (``modeling.py``, ``training.py``, NUGGET §3-4):

- a trained model folder of the zoo, ``models/nugget/<objective>/<variant>/seed<seed>/`` (``multivec.nugget.zoo``:
  ``r<r>_l<l>_<selector>_<fb|nofb>``, ``tsdae``, ``base_r1``), or an LM ``models/nugget_lm/<name>/seed<seed>/``:
  ``model.safetensors``, ``config.json`` (``{"model": NuggetConfig, ...}``), ``backbone/``,
  ``source_tokenizer/``, ``target_tokenizer/``, ``training_summary.json``, ``metrics.csv``,
  ``checkpoint/``;
- a training checkpoint (``checkpoint/`` with ``latest.json``, or one ``step_*`` folder);
- a tokenizer folder, and a Hugging Face config folder (``backbone/``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from multivec.inspection.common import (InspectError, Report, parameter_count, read_json_checked, read_table, short,
                                        short_json)
from multivec.inspection.registry import inspector

HYPERPARAMETER_KEYS = ("model_type", "architectures", "hidden_size", "d_model", "num_hidden_layers",
                       "encoder_layers", "decoder_layers", "num_attention_heads", "encoder_attention_heads",
                       "intermediate_size", "vocab_size", "max_position_embeddings")
_PROJECT_KEY = re.compile(r"nugget|ratio|scorer|objective|selector|feedback|residual|encoder|decoder|base")


def _scalars(mapping: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if not isinstance(v, (dict, list))}


def _hyperparameters(path: Path, config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Groups of settings of a model folder's ``config.json``, named for display.

    A NUGGET model (``NuggetModel.save_pretrained``) writes ``{"model": NuggetConfig, "train": ...,
    "derived": ...}`` and its backbone's sizes in ``backbone/config.json``; a flat Hugging Face
    config gives the sizes and the project's own keys (ratio, scorer, ...).
    """
    if isinstance(config.get("model"), dict):
        backbone_file = path / "backbone" / "config.json"
        backbone = read_json_checked(backbone_file) if backbone_file.is_file() else {}
        groups = {"backbone": backbone if isinstance(backbone, dict) else {}}
        groups.update({key: value for key, value in config.items() if isinstance(value, dict)})
        groups["other"] = _scalars(config)
    else:
        groups = {"backbone": config, "other": {k: v for k, v in _scalars(config).items()
                                                if k not in HYPERPARAMETER_KEYS and _PROJECT_KEY.search(k)}}
    groups["backbone"] = {k: groups["backbone"][k] for k in HYPERPARAMETER_KEYS if k in groups["backbone"]}
    return {name: values for name, values in groups.items() if values}


def _print_hyperparameters(path: Path, config: dict[str, Any], report: Report) -> None:
    groups = _hyperparameters(path, config)
    if set(groups) <= {"backbone", "other"}:  # a flat config: one line, as Hugging Face lists it
        merged = {**groups.get("backbone", {}), **groups.get("other", {})}
        report.line("hyperparameters: " + ", ".join(f"{k}={v}" for k, v in merged.items()))
        return
    report.line("hyperparameters:")
    for name, values in groups.items():
        shown = ", ".join(f"{k}={v if not isinstance(v, (dict, list)) else short_json(v, 80)}"
                          for k, v in values.items())
        report.line(f"  {name}: {shown}")


def _latest_step_folder(checkpoint: Path) -> Path:
    latest = checkpoint / "latest.json"
    value = read_json_checked(latest)
    if not (isinstance(value, dict) and isinstance(value.get("folder"), str)):
        raise InspectError(f"{latest}: expected {{\"folder\": \"step_...\"}}, got {short_json(value, 80)}")
    folder = checkpoint / value["folder"]
    if not (folder / "state.json").is_file():
        raise InspectError(f"{latest}: names {value['folder']}, which has no state.json")
    return folder


@inspector("model", "a trained model: config.json + model.safetensors [+ training_summary.json, metrics.csv]",
           lambda p: p.is_dir() and (p / "config.json").is_file() and any(p.glob("*.safetensors")), 80)
def inspect_model(path: Path, report: Report) -> None:
    config = read_json_checked(path / "config.json")
    if not isinstance(config, dict):
        raise InspectError(f"{path / 'config.json'}: expected a JSON object")
    weights = sorted(path.glob("*.safetensors"))
    parameters, tensors = parameter_count(weights)
    report.line(f"parameters: {parameters:,} in {tensors} tensors ({', '.join(w.name for w in weights)})")
    _print_hyperparameters(path, config, report)
    parts = [p.name for p in sorted(path.iterdir()) if p.is_dir()]
    if parts:
        report.line(f"folders: {', '.join(parts)}")
    if (path / "training_summary.json").is_file():
        summary = read_json_checked(path / "training_summary.json")
        report.line("training summary:")
        for key, value in (summary.items() if isinstance(summary, dict) else [("value", summary)]):
            report.line(f"  {key}: {short_json(value)}")
    if (path / "metrics.csv").is_file():
        table = read_table(path / "metrics.csv", ",")
        report.line(f"metrics.csv: {table.shape[0]} rows x {table.shape[1]} columns; last {report.n}:")
        report.table(table.tail(report.n), index=False)
    if (path / "checkpoint" / "latest.json").is_file():
        state = read_json_checked(_latest_step_folder(path / "checkpoint") / "state.json")
        report.line(f"checkpoint: step {state.get('step')} (resumable)")


@inspector("checkpoint", "a training checkpoint: checkpoint/ (latest.json) or one step_* folder (state.json)",
           lambda p: p.is_dir() and ((p / "latest.json").is_file() or (p / "state.json").is_file()), 85)
def inspect_checkpoint(path: Path, report: Report) -> None:
    if (path / "latest.json").is_file():
        path = _latest_step_folder(path)
        report.line(f"latest: {path.name}")
    state = read_json_checked(path / "state.json")
    if not isinstance(state, dict):
        raise InspectError(f"{path / 'state.json'}: expected a JSON object")
    elapsed = state.get("elapsed_s")
    report.line(f"step: {state.get('step')}  epoch: {state.get('epoch')}  best step: {state.get('best_step')}  "
                f"best dev loss: {state.get('best_dev_loss')}  "
                f"elapsed: {f'{elapsed:.1f} s' if isinstance(elapsed, (int, float)) else elapsed}")
    for row in state.get("metrics", [])[-report.n:]:
        report.line(f"  {row}")
    for weights in sorted(path.glob("*.safetensors")):
        parameters, tensors = parameter_count([weights])
        report.line(f"weights {weights.name}: {parameters:,} parameters in {tensors} tensors")
    report.line(f"files: {', '.join(sorted(p.name for p in path.iterdir()))}")


@inspector("tokenizer", "a tokenizer folder (tokenizer.json / tokenizer_config.json): vocabulary, a sample",
           lambda p: p.is_dir() and ((p / "tokenizer.json").is_file() or (p / "tokenizer_config.json").is_file()), 60)
def inspect_tokenizer(path: Path, report: Report) -> None:
    import json

    from tokenizers import Tokenizer

    if (path / "tokenizer.json").is_file():
        try:
            loaded = Tokenizer.from_file(str(path / "tokenizer.json"))
        except Exception as err:  # the Rust library raises plain Exception for any bad file
            raise InspectError(f"{path / 'tokenizer.json'}: not a readable tokenizer: {err}") from None
        loaded.no_padding()
        loaded.no_truncation()
        model = json.loads(loaded.to_str())["model"]["type"]
        report.line(f"type: {model}  vocabulary: {loaded.get_vocab_size():,}")
        sample = "Nuggets keep a few token states of each document."
        report.line(f"  {sample!r} -> {loaded.encode(sample).tokens}")
    for meta in ("target_tokenizer.json", "tokenizer_config.json"):
        if (path / meta).is_file():
            value = read_json_checked(path / meta)
            if isinstance(value, dict):
                report.line(short(f"{meta}: " + ", ".join(f"{k}={v}" for k, v in _scalars(value).items()), 400))
    report.line(f"files: {', '.join(sorted(p.name for p in path.iterdir()))}")


@inspector("model config", "a Hugging Face config folder (config.json only): architecture and sizes",
           lambda p: p.is_dir() and (p / "config.json").is_file(), 50)
def inspect_model_config(path: Path, report: Report) -> None:
    config = read_json_checked(path / "config.json")
    groups = _hyperparameters(path, config if isinstance(config, dict) else {})
    report.line("  ".join(f"{k}={v}" for values in groups.values() for k, v in values.items()))


@inspector("frozen bottom states", "shared frozen-bottom token states of a task (frozen_bottom.py): "
           "states.safetensors + info.json", lambda p: p.is_dir() and (p / "states.safetensors").is_file(), 85)
def inspect_frozen_bottom(path: Path, report: Report) -> None:
    from multivec.nugget.frozen_bottom import read_bottom_states

    try:
        bottom = read_bottom_states(path)
    except (ValueError, OSError) as error:
        raise InspectError(str(error)) from None
    info = bottom.info
    lengths = bottom.offsets[1:] - bottom.offsets[:-1]
    report.line(f"encoder: {info.get('encoder')} ({info.get('architecture')}), states after layer {info.get('layer')}"
                f" (embeddings + layers 1..{info.get('layer')}), max {info.get('max_tokens')} tokens")
    report.line(f"documents: {len(lengths)}  token states: {bottom.states.shape[0]:,} × {bottom.states.shape[1]} "
                f"{info.get('dtype')}  tokens per document: mean {lengths.mean():.1f}, max {lengths.max()}")
    truncation = info.get("truncation") or {}
    if truncation:
        report.line(f"truncated: {truncation.get('truncated_documents')} documents, "
                    f"{100 * truncation.get('tokens_lost_share', 0):.2f}% of tokens lost")
    report.line(f"token-id sha256: {info.get('token_ids_sha256', '')[:16]}…")
