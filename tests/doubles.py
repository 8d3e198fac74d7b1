"""Test doubles and walks shared by several test files (importable: tests/ is on sys.path under pytest)."""

import types
from pathlib import Path


def fake_snakemake(inputs: dict, outputs: dict, params: dict, log: Path, **extra):
    """A stand-in for the ``snakemake`` object a workflow script reads: named and indexed input/output files,
    params, one log file, one thread, and any other attribute given (e.g. ``config={}``)."""
    class Files(types.SimpleNamespace):
        def get(self, key, default=None):
            return getattr(self, key, default)

        def __getitem__(self, key):
            return list(vars(self).values())[key] if isinstance(key, int) else getattr(self, key)

    return types.SimpleNamespace(input=Files(**{k: str(v) for k, v in inputs.items()}),
                                 output=Files(**{k: str(v) for k, v in outputs.items()}),
                                 params=types.SimpleNamespace(**params), log=[str(log)], threads=1, **extra)


def schema_nodes(node, where="#"):
    """Every (JSON pointer, object) of a JSON schema, depth first."""
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            yield from schema_nodes(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from schema_nodes(value, f"{where}[{i}]")
