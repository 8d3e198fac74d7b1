"""Loading NLTK's data (punkt_tab, WordNet) with one message when it is missing or incomplete.

``ensure_nltk_data`` (``multivec.io.resources``) puts ``$NLTK_DATA`` and ``<mirror>/nltk_data`` on NLTK's path
and checks that the resource's folder exists; a folder that exists but lacks a file (an interrupted copy, a
partial download) passes that check and used to fail later, at the first sentence or word, as NLTK's own
``LookupError``/``OSError`` traceback. ``load_nltk_resource`` loads the resource at once, where it is asked for,
and turns either failure into one ``NltkResourceError`` naming the resource, ``$NLTK_DATA`` and the data
mirror's ``nltk_data`` folder (``$MULTIVEC_DATA_MIRROR/nltk_data``), with the values they have here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, TypeVar

from multivec.io.resources import ENV_MIRROR, ResourceError

T = TypeVar("T")


class NltkResourceError(ResourceError):
    """An NLTK resource that cannot be loaded; the message names it, $NLTK_DATA and the mirror's nltk_data."""


def nltk_resource_message(resource: str, reason: str, mirror: str | os.PathLike | None = None) -> str:
    """The one message for an NLTK resource that cannot be loaded (see the module docstring)."""
    package = resource.strip("/").split("/")[1] if resource.count("/") else resource
    nltk_data = os.environ.get("NLTK_DATA")
    mirror = mirror if mirror is not None else os.environ.get(ENV_MIRROR)
    mirror_folder = f"{Path(mirror) / 'nltk_data'}" if mirror else f"${ENV_MIRROR} is not set"
    return (f"NLTK resource {resource!r} (package {package}) cannot be loaded: {reason}. NLTK looks in $NLTK_DATA "
            f"({nltk_data or 'not set'}) and in the data mirror's nltk_data folder, ${ENV_MIRROR}/nltk_data "
            f"({mirror_folder}); put a complete copy of {package} in one of them, e.g. "
            f"python -m nltk.downloader -d <that folder> {package}")


def load_nltk_resource(resource: str, load: Callable[[], T], mirror: str | os.PathLike | None = None) -> T:
    """``load()`` once ``resource`` is findable (``ensure_nltk_data``); a resource that is absent, or whose
    folder lacks a file NLTK reads (``LookupError``, ``OSError``), raises ``NltkResourceError``."""
    from multivec.io.resources import data_mirror, ensure_nltk_data

    if mirror is None:
        mirror = data_mirror()
    try:
        ensure_nltk_data(resource, mirror)
    except ResourceError as err:
        raise NltkResourceError(nltk_resource_message(resource, f"not found ({err})", mirror)) from None
    try:
        return load()
    except (LookupError, OSError) as err:
        reason = " ".join(str(err).split()) or type(err).__name__
        raise NltkResourceError(nltk_resource_message(resource, f"its data is incomplete ({reason[:300]})",
                                                      mirror)) from None
