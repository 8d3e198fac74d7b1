"""Devices, precision and multi-process (DDP) helpers of the training engine.

``setup_runtime`` reads torchrun's environment (``WORLD_SIZE``, ``RANK``, ``LOCAL_RANK``): with
``WORLD_SIZE > 1`` it starts a process group (NCCL on CUDA, gloo on CPU) and every rank trains one share
of each step's batches under DistributedDataParallel. ``all_gather_with_grad`` gathers a tensor from all
ranks so that a contrastive loss (the sub-sentence encoder's SupCon loss, Chen et al. 2023 §3) sees every
rank's embeddings while gradients still flow back to each rank's own slice.

Precision: ``fp32`` everywhere; ``bf16`` autocast on a CUDA GPU that supports it, or on a CPU with bfloat16 matrix
units (``cpu_bf16_units``: x86 ``avx512_bf16``/``amx_bf16``, Arm ``bf16``), where it is opt-in: a CPU without them
emulates bf16 several times slower than fp32, so it is refused there; ``fp16`` (with a grad scaler) on CUDA only.
"""

from __future__ import annotations

import atexit
import contextlib
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

PRECISIONS = ("fp32", "bf16", "fp16")
# /proc/cpuinfo feature names of bfloat16 matrix units: x86 (AVX512-BF16, AMX-BF16) and Arm (FEAT_BF16)
CPU_BF16_FEATURES = ("avx512_bf16", "amx_bf16", "bf16")


@dataclass(frozen=True)
class Runtime:
    """Where and how this process trains."""

    device: torch.device
    rank: int = 0
    local_rank: int = 0
    world_size: int = 1
    precision: str = "fp32"  # "fp32" | "bf16" (autocast) | "fp16" (autocast + GradScaler)

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def autocast(self):
        """The forward-pass context: bf16/fp16 autocast (on CUDA, or bf16 on a CPU with bf16 units), nothing in
        fp32."""
        if self.precision == "fp32":
            return contextlib.nullcontext()
        dtype = torch.bfloat16 if self.precision == "bf16" else torch.float16
        return torch.autocast(self.device.type, dtype=dtype)

    def barrier(self) -> None:
        if self.distributed:
            dist.barrier()

    def any_rank(self, flag: bool) -> bool:
        """True on every rank when ``flag`` is true on at least one (stop decisions must agree)."""
        if not self.distributed:
            return flag
        tensor = torch.tensor([int(flag)], device=self.device)
        dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
        return bool(tensor.item())

    def sum_over_ranks(self, *values: float) -> list[float]:
        """Each value summed over all ranks (one all-reduce); the values themselves in one process."""
        if not self.distributed:
            return list(values)
        tensor = torch.tensor(values, dtype=torch.float64, device=self.device)
        dist.all_reduce(tensor)
        return tensor.tolist()


def resolve_device(device: str, local_rank: int = 0) -> torch.device:
    """``"auto"``: CUDA when available, else CPU; ``"cuda"`` without CUDA is an error."""
    if device not in ("auto", "cpu", "cuda"):
        raise ValueError(f"device={device!r}: expected 'auto', 'cpu' or 'cuda'")
    if device == "cpu" or (device == "auto" and not torch.cuda.is_available()):
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise RuntimeError("train.device='cuda' but CUDA is not available")
    return torch.device("cuda", local_rank)


def cpu_bf16_units(cpuinfo: str | None = None) -> list[str]:
    """The bfloat16 matrix features (``CPU_BF16_FEATURES``) that ``cpuinfo`` (default: ``/proc/cpuinfo``) lists in
    its ``flags`` (x86) or ``Features`` (Arm) line; ``[]`` where it lists none or cannot be read."""
    if cpuinfo is None:
        try:
            cpuinfo = open("/proc/cpuinfo", encoding="utf-8").read()
        except OSError:
            return []
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            features = set(value.split())
            return [f for f in CPU_BF16_FEATURES if f in features]
    return []


def check_precision(precision: str, device: torch.device) -> None:
    """Refuse a precision the device cannot train in, with the key to change."""
    if precision not in PRECISIONS:
        raise ValueError(f"train.precision={precision!r}: expected one of {', '.join(PRECISIONS)}")
    if precision == "fp32":
        return
    if device.type != "cuda":
        if precision == "bf16":
            if cpu_bf16_units():
                return
            raise ValueError("train.precision='bf16' on a CPU needs bfloat16 units (x86 avx512_bf16 or amx_bf16, "
                             f"Arm bf16) and this one has none, so training runs on {device} several times "
                             "slower than in fp32; set train.precision: fp32")
        raise ValueError(f"train.precision={precision!r} needs a CUDA device, but training runs on {device}; "
                         "set train.precision: fp32 (or bf16 on a CPU with bfloat16 units)")
    if precision == "bf16" and not torch.cuda.is_bf16_supported():
        raise ValueError(f"train.precision='bf16' is not supported by {torch.cuda.get_device_name(device)}; "
                         "use train.precision: fp16 (with a grad scaler) or fp32")


def setup_runtime(device: str = "auto", precision: str = "fp32", threads: int | None = None) -> Runtime:
    """Device, precision check, torch threads and, under torchrun (``WORLD_SIZE > 1``), the process group."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    resolved = resolve_device(device, local_rank)
    check_precision(precision, resolved)
    if threads:
        torch.set_num_threads(threads)
    if world > 1 and not dist.is_initialized():
        if resolved.type == "cuda":
            torch.cuda.set_device(resolved)
        dist.init_process_group("nccl" if resolved.type == "cuda" else "gloo")
        # A process that exits with its group alive can abort in the group's destructor ("terminate called
        # without an active exception", SIGABRT) after training succeeded; close it explicitly at exit.
        atexit.register(close_process_group)
    rank = dist.get_rank() if world > 1 else 0
    return Runtime(device=resolved, rank=rank, local_rank=local_rank, world_size=world, precision=precision)


def close_process_group() -> None:
    """Wait for every rank, then destroy the process group (a no-op without one)."""
    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def all_gather_with_grad(tensor: torch.Tensor) -> torch.Tensor:
    """Concatenate ``tensor`` (same shape on every rank) from all ranks along dim 0, rank order.

    Unlike ``dist.all_gather`` the result keeps the autograd graph: the gradient of each rank's slice is
    summed over ranks and returned to the rank that produced it. One process: ``tensor`` itself.
    """
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return tensor
    from torch.distributed.nn.functional import all_gather

    return torch.cat(all_gather(tensor), dim=0)
