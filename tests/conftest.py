"""Shared fixtures. Tests never reach a model hub: HF_HUB_OFFLINE=1 is forced here."""

import os
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The local data mirror named by $MULTIVEC_DATA_MIRROR (.ci/run sets it)."""
    value = os.environ.get("MULTIVEC_DATA_MIRROR")
    if not value:
        pytest.skip("MULTIVEC_DATA_MIRROR is not set: tests on real mirrored data need it")
    path = Path(value)
    assert path.is_dir(), f"MULTIVEC_DATA_MIRROR={value} is not a directory"
    return path


@pytest.fixture(autouse=True)
def _one_thread():
    """Tests share a 2-core machine: keep torch to one thread."""
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(1)
