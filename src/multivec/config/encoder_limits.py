"""Lengths and layers within the limits of the encoders that read them, from each encoder's own
``config.json`` (``max_position_embeddings``; ``encoder_layers`` or ``num_hidden_layers``). An encoder that is
not on this machine (a hub id at paper scale, not cached) is not fetched: its checks are skipped with a note.
"""

from __future__ import annotations

import json
from pathlib import Path

from multivec.config.dataclass_config import ConfigError
from multivec.config.merged_settings import merge, nugget_layers
from multivec.config.schema import unique_problems
from multivec.io.resources import (MINILM_NAMES, ResourceError, is_tiny_random, minilm_path, mirrored_model,
                                   tiny_random_sizes)


def encoder_limits(ref: str) -> tuple[dict | None, str]:
    """``({"positions": int | None, "layers": int | None}, where)`` for an encoder reference.

    ``where`` names the config the limits come from; the dict is None (and ``where`` says
    why) when the encoder's config is not available on this machine.
    """
    if is_tiny_random(ref):
        sizes = tiny_random_sizes(ref)
        layers = sizes.get("encoder_layers", sizes.get("num_hidden_layers"))
        return {"positions": sizes["max_position_embeddings"], "layers": layers}, f"{ref} (multivec.io.resources)"
    config_path = _local_config_json(ref)
    if config_path is None:
        return None, (f"encoder {ref!r} is not on this machine (hub id, not in the data mirror's models/ nor in "
                      "the local hub cache)")
    try:
        hf_config = json.loads(Path(config_path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ConfigError(f"cannot read the encoder config {config_path} of {ref!r}: {err}") from None
    layers = hf_config.get("encoder_layers", hf_config.get("num_hidden_layers"))
    return {"positions": hf_config.get("max_position_embeddings"), "layers": layers}, str(config_path)


def _local_config_json(ref: str) -> Path | None:
    if ref in MINILM_NAMES:
        return Path(minilm_path()) / "config.json"
    folder = Path(ref).expanduser()
    if folder.is_dir():
        if not (folder / "config.json").is_file():
            raise ConfigError(f"model folder {ref!r} has no config.json")
        return folder / "config.json"
    if ref.startswith((".", "/", "~")):
        raise ConfigError(f"model folder {ref!r} does not exist")
    mirrored = mirrored_model(ref)  # <mirror>/models/<hub id>/, where resolve_model loads it from
    if mirrored is not None:
        return Path(mirrored) / "config.json"
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    cached = try_to_load_from_cache(ref, "config.json")
    return Path(cached) if isinstance(cached, str) else None


def encoder_problems(config: dict, notes: list[str]) -> list[str]:
    """Lengths and layers within the limits of the encoders that read them (see the module docstring)."""
    problems: list[str] = []
    limits_of: dict[str, tuple[dict | None, str] | ConfigError | ResourceError] = {}

    def limits(ref: str, ref_path: str) -> tuple[dict, str] | None:
        if ref not in limits_of:
            try:
                limits_of[ref] = encoder_limits(ref)
            except (ConfigError, ResourceError) as err:
                limits_of[ref] = err
            else:
                if limits_of[ref][0] is None:
                    notes.append(f"{limits_of[ref][1]}: position and layer limits of {ref_path} {ref!r} not checked")
        found = limits_of[ref]
        if isinstance(found, Exception):
            problems.append(f"{ref_path}: {found}")
            return None
        return found if found[0] is not None else None

    table2_max = config["table2"].get("max_tokens")
    for ref_path in ("base_encoder", "nugget.encoder"):
        ref = config["base_encoder"] if ref_path == "base_encoder" else config["nugget"]["encoder"]
        found = limits(ref, ref_path)
        if found and found[0]["positions"] and table2_max is not None and table2_max > found[0]["positions"]:
            positions = found[0]["positions"]
            problems.append(f"table2.max_tokens: {table2_max} is above the position limit of {ref_path} {ref!r} "
                            f"(max_position_embeddings = {positions} in {found[1]}); allowed: 1..{positions}, "
                            "or null for the encoder's limit")
    models = nugget_layers(config)
    for what, layers in models.items():
        values, paths = merge(layers)
        found = limits(values["encoder"], paths["encoder"])
        if not found:
            continue
        (positions, layer_count), where = (found[0]["positions"], found[0]["layers"]), found[1]
        named = f"{paths['encoder']} {values['encoder']!r}"
        source = values.get("max_source_tokens")
        if positions and source is not None and source > positions:
            problems.append(f"{paths['max_source_tokens']}: {source} is above the position limit of {named} "
                            f"(max_position_embeddings = {positions} in {where}); allowed: 1..{positions}")
        if layer_count is None:
            continue
        for key in ("scorer_layer", "frozen_layers"):
            value = values.get(key)
            if isinstance(value, int) and value > layer_count:
                problems.append(f"{paths[key]}: {value} is above the layer count of {named} ({layer_count} layers in "
                                f"{where}); allowed: 0..{layer_count} (0 = the embedding output)")
        copied = values.get("decoder_copy_layers") or []
        if any(isinstance(i, int) and i >= layer_count for i in copied):
            problems.append(f"{paths['decoder_copy_layers']}: {copied} names a layer beyond the {layer_count} "
                            f"layers of {named} (0-based, in {where}); allowed: 0..{layer_count - 1}")
        if what == "nugget_analysis mt_r0.1":
            for paper, ours in (config.get("nugget_ablation", {}).get("layers") or {}).items():
                if isinstance(ours, int) and ours > layer_count:
                    problems.append(f'nugget_ablation.layers["{paper}"]: {ours} is above the layer count of {named} '
                                    f"({layer_count} layers in {where}); allowed: 0..{layer_count}")
    return unique_problems(problems)
