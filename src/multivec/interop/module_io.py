"""Saving and loading of this project's own sentence-transformers modules (shared by ``NuggetSelector`` and
``PropositionPooling``): settings in ``config.json``, weights in ``model.safetensors``, and a missing file in a
local exported folder named with its folder, file and module (the library's own message names neither)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sentence_transformers.base.modules import Module


def require_local_files(model_name_or_path: str, subfolder: str, module: str) -> None:
    """In a local exported folder, the module's ``config.json`` and ``model.safetensors`` must both be there."""
    root = Path(model_name_or_path)
    if not root.is_dir():
        return
    for name in ("config.json", "model.safetensors"):
        if not (root / subfolder / name).is_file():
            raise FileNotFoundError(f"{root / subfolder / name}: missing; the exported folder {root} lists "
                                    f"{module} in modules.json, whose settings and weights are {subfolder}/config.json "
                                    f"and {subfolder}/model.safetensors")


class ExportedModule(Module):
    """A module whose constructor takes its ``config_keys``: saved as their values plus its weights."""

    def save(self, output_path: str, *args: Any, safe_serialization: bool = True, **kwargs: Any) -> None:
        self.save_config(output_path)
        self.save_torch_weights(output_path, safe_serialization=safe_serialization)

    @classmethod
    def load(cls, model_name_or_path: str, subfolder: str = "", token=None, cache_folder=None, revision=None,
             local_files_only: bool = False, **kwargs: Any):
        hub = dict(subfolder=subfolder, token=token, cache_folder=cache_folder, revision=revision,
                   local_files_only=local_files_only)
        require_local_files(model_name_or_path, subfolder, cls.__name__)
        config = cls.load_config(model_name_or_path, **hub)
        if not config:
            raise FileNotFoundError(f"{model_name_or_path}/{subfolder}/config.json: missing ({cls.__name__}'s "
                                    "settings)")
        module = cls(**config)
        cls.load_torch_weights(model_name_or_path, model=module, **hub)
        return module.eval()
