"""What a rule asks the scheduler for, from the config's ``resources`` block by family.

Every rule names one family of ``resources`` (``train``, ``encode``, ``build``; config/schema.yaml) and reads
its threads, memory and runtime from there, so one line of the config sizes every rule of a family at a scale
(demo, smoke, paper). In a rule (rules/common.smk wraps these with the workflow's config)::

    threads: family_threads("encode")
    resources:
        **family_resources("encode", gpu=True),

``gpu`` is asked for only by the rules that use one (``gpu=True``): a family without a ``gpu`` key asks for 0.
"""

from collections.abc import Mapping

RESOURCE_KEYS = ("mem_mb", "runtime")  # what every rule of a family asks for, in this order


class MissingResourceFamily(KeyError):
    """A rule names a resource family the config's ``resources`` block lacks."""

    def __str__(self) -> str:  # KeyError's own would print the message as a quoted repr
        return str(self.args[0])


def family(resources: Mapping, name: str) -> Mapping:
    """The ``resources.<name>`` block of the config; a missing one stops naming the key and the known families."""
    try:
        return resources[name]
    except KeyError:
        known = ", ".join(sorted(resources)) or "none"
        raise MissingResourceFamily(f"config key resources.{name} is missing: a rule asks for the resource "
                                    f"family {name!r} (families in the config: {known})") from None


def family_threads(resources: Mapping, name: str) -> int:
    """``threads:`` of a rule of the family: ``resources.<name>.threads``."""
    return family(resources, name)["threads"]


def family_gpu(resources: Mapping, name: str) -> int:
    """GPUs a rule of the family asks for: ``resources.<name>.gpu``, 0 when the family sets none."""
    return family(resources, name).get("gpu", 0)


def family_resources(resources: Mapping, name: str, *, gpu: bool = False) -> dict:
    """``resources:`` of a rule of the family: ``mem_mb`` and ``runtime``, and ``gpu`` (default 0) with
    ``gpu=True``."""
    block = family(resources, name)
    asked = {key: block[key] for key in RESOURCE_KEYS}
    if gpu:
        asked["gpu"] = family_gpu(resources, name)
    return asked
