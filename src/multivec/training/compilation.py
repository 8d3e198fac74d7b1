"""Regional compilation: ``torch.compile`` on the repeated blocks of a model (its transformer layers), in place.

PyTorch's recipe "Reducing torch.compile cold start compilation time with regional compilation" compiles the
block that a model repeats (one layer of an encoder or decoder stack) instead of the whole model: one traced
graph serves every layer, so compiling takes seconds to a minute instead of minutes, and the model's own
Python between the layers (NUGGET's scorer and selection, a task's loss, the losses' all-gather) stays eager,
where data-dependent shapes (k = ceil(n r) nuggets per document) would otherwise break or recompile the graph.

Compiling in place (``nn.Module.compile``) keeps every parameter name, so ``state_dict``, checkpoints and
resumption are unchanged; ``torch.compile(model)`` would prefix every key with ``_orig_mod.``.

The training engine calls ``compile_repeated_blocks`` when ``train.compile`` is true (an option, off by
default: on a CPU, compiling costs more than the demo's short runs gain, and kernels may round differently
from eager). Shared by every trained model.
"""

from __future__ import annotations

import logging

import torch
from torch import nn

log = logging.getLogger(__name__)

# Dynamo keeps compiled graphs per code object, and transformers' layers share one (GradientCheckpointingLayer's
# __call__): an encoder layer and a decoder layer, training and evaluation, with and without gradients (NUGGET's
# frozen bottom), called with different arguments, are each a graph of that one code object. Past torch's default
# of 8 the remaining calls would run eagerly, silently; the accumulated limit (256) still bounds the total.
RECOMPILE_LIMIT = 64


def repeated_blocks(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """(name, block) of every child of an ``nn.ModuleList`` with two or more children all of one class (the
    layers of a stack), outermost first; a list inside a block already chosen is skipped (its block compiles
    it)."""
    chosen: list[tuple[str, nn.Module]] = []
    for name, module in model.named_modules():
        if not isinstance(module, nn.ModuleList) or len(module) < 2:
            continue
        if len({type(child) for child in module}) != 1:
            continue
        if any(name == prefix or name.startswith(prefix + ".") for prefix, _ in chosen):
            continue
        chosen.extend((f"{name}.{index}" if name else str(index), child) for index, child in enumerate(module))
    return chosen


def compile_repeated_blocks(model: nn.Module, **compile_options) -> list[str]:
    """``block.compile(**compile_options)`` on every block of ``repeated_blocks(model)``; returns their names.
    A model without repeated blocks is refused: ``train.compile`` would silently do nothing."""
    blocks = repeated_blocks(model)
    if not blocks:
        raise ValueError(f"train.compile: {type(model).__name__} has no repeated blocks (an nn.ModuleList of "
                         "layers of one class) to compile; set train.compile: false")
    dynamo = torch._dynamo.config
    name = "recompile_limit" if hasattr(dynamo, "recompile_limit") else "cache_size_limit"  # its name before 2.7
    setattr(dynamo, name, max(getattr(dynamo, name), RECOMPILE_LIMIT))
    for _, block in blocks:
        block.compile(**compile_options)
    classes = sorted({type(block).__name__ for _, block in blocks})
    log.info("compiled %d repeated blocks in place (%s)", len(blocks), ", ".join(classes))
    return [name for name, _ in blocks]
