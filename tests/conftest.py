"""Shared fixtures. Tests never reach a model hub: HF_HUB_OFFLINE=1 is forced here."""

import os
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

REPO = Path(__file__).resolve().parents[1]

# The README's test command gives the mirror relative to where pytest starts
# (MULTIVEC_DATA_MIRROR=../shared/data); tests run Snakemake in other directories, so the
# path is made absolute once, here, against the directory pytest was started from.
if os.environ.get("MULTIVEC_DATA_MIRROR"):
    os.environ["MULTIVEC_DATA_MIRROR"] = str(Path(os.environ["MULTIVEC_DATA_MIRROR"]).expanduser().resolve())


# What a run of the workflow needs from the repository (tests copy it so runs never touch the checkout).
WORKFLOW_PARTS = ["Snakefile", "rules", "workflow", "config", "profiles", "envs", "src", "scripts"]


@pytest.fixture(scope="session")
def copy_workflow():
    """A function that copies the workflow's parts into a new folder ``dest`` and returns ``dest``."""
    import shutil

    def copy(dest: Path) -> Path:
        dest.mkdir(parents=True)
        for part in WORKFLOW_PARTS:
            src = REPO / part
            (shutil.copytree if src.is_dir() else shutil.copy)(src, dest / part)
        return dest

    return copy


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
