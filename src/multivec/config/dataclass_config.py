"""Configuration dataclasses built from config dicts, shared by every work's model and training configs.

``NuggetConfig``, ``TrainConfig``, ``SubEncoderConfig``, ``StudentConfig`` and ``LossConfig`` are each built
from one block of the workflow's config by ``from_dict``: a key the dataclass does not know stops with a
``ConfigError`` that names it and lists the known ones (a typo must not fall back to a default silently).
Kept apart from any one work so that the training engine and the other works need not import NUGGET.
"""

from __future__ import annotations

import dataclasses
from typing import Any


class ConfigError(ValueError):
    """The configuration is invalid; the message names the offending key (a key path or file:line where the
    workflow's checks know it) and what is allowed. The one class for a bad config, raised by the workflow's
    checks (``multivec.config``) and by every config dataclass."""


def from_dict(cls, data: dict[str, Any], what: str):
    """``cls(**data)``, after refusing any key that is not one of ``cls``'s fields (``what`` names it)."""
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ConfigError(f"unknown {what} key(s): {', '.join(unknown)}; known keys: {', '.join(sorted(names))}")
    return cls(**data)
