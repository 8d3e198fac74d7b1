"""Package names that load from their submodule on first use (PEP 562), for the packages the workflow imports
while it parses (``multivec.evaluation``, ``multivec.statistics``): importing one of their light submodules must
not load the heavy ones (torch, pandas, scipy) that their other names need."""

from __future__ import annotations

import importlib
from typing import Callable, Mapping


def lazy_exports(package: str, where: Mapping[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose name ``n`` is ``package.<where[n]>.n``."""

    def __getattr__(name: str):
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{where[name]}"), name)

    def __dir__() -> list[str]:
        return sorted(set(vars(importlib.import_module(package))) | set(where))

    return __getattr__, __dir__
