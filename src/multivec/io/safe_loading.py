"""Reading weights without running code: every model file a rule reads is safetensors (a JSON
header and raw bytes), read through these helpers so a damaged or planted file (a pickle renamed
``model.safetensors``) fails with one message naming the file instead of the library's bare
``SafetensorError``. The other loaders: ``.pt`` checkpoint files use ``torch.load(weights_only=True)``
(``multivec.training.checkpoint.safe_load``), Paragraph Vector models are safetensors + JSON
(``multivec.distill.teachers.doc2vec_files``), Hugging Face folders the DAG wrote are loaded with
``use_safetensors=True``; ``tests/test_safe_loading.py`` plants a pickle for each.
"""

from __future__ import annotations

import os
from pathlib import Path

from multivec.io import MalformedInputError


def unreadable_safetensors(path: Path, err: Exception) -> MalformedInputError:
    """The one message for a safetensors file that does not parse (a pickle renamed, a cut-off file)."""
    return MalformedInputError(path, None, f"not a readable safetensors file ({type(err).__name__}: "
                               f"{str(err).splitlines()[0] if str(err) else 'no detail'})")


def read_safetensors(path: str | os.PathLike, device: str = "cpu", framework: str = "pt") -> dict:
    """``{name: tensor}`` of a safetensors file (``torch.Tensor``, or ``numpy.ndarray`` with ``framework="numpy"``);
    a missing or malformed file is an error naming it."""
    from safetensors import SafetensorError

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing (weights are stored as safetensors)")
    try:
        if framework == "numpy":
            from safetensors.numpy import load_file as load_numpy

            return load_numpy(str(path))
        from safetensors.torch import load_file

        return load_file(str(path), device=device)
    except (SafetensorError, OSError, ValueError) as err:
        raise unreadable_safetensors(path, err) from None


def load_safetensors_into(module, path: str | os.PathLike, strict: bool = True) -> tuple[list[str], list[str]]:
    """``safetensors.torch.load_model(module, path, strict)`` (tied weights handled); a missing or malformed
    file is an error naming it. Returns ``(missing, unexpected)`` parameter names."""
    from safetensors import SafetensorError
    from safetensors.torch import load_model

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing (weights are stored as safetensors)")
    try:
        missing, unexpected = load_model(module, str(path), strict=strict)
    except (SafetensorError, OSError) as err:
        raise unreadable_safetensors(path, err) from None
    except RuntimeError as err:  # strict: names or shapes differ from the module's
        raise ValueError(f"{path}: weights do not match the model ({str(err).splitlines()[0]})") from None
    return list(missing), list(unexpected)


def from_dag_folder(model_class, folder: str | os.PathLike, **kwargs):
    """``model_class.from_pretrained(folder, use_safetensors=True)`` for a Hugging Face folder a rule wrote: the
    weights come from ``model.safetensors`` only (a planted ``pytorch_model.bin`` is never read); a missing or
    malformed weights file is an error naming it."""
    from safetensors import SafetensorError

    folder = Path(folder)
    weights = folder / "model.safetensors"
    if not weights.is_file() and not (folder / "model.safetensors.index.json").is_file():
        raise FileNotFoundError(f"{weights}: missing (the DAG's model folders hold safetensors weights; a "
                                "pytorch_model.bin is never read)")
    try:
        return model_class.from_pretrained(str(folder), use_safetensors=True, **kwargs)
    except SafetensorError as err:
        raise unreadable_safetensors(weights, err) from None
