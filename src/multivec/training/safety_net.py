"""The training safety net (``TrainConfig.max_minutes``) as a Snakemake rule carries it.

A run past ``max_minutes`` fails and keeps its checkpoint; raising the net and rerunning resumes it
(``TrainingTimeLimitError``). Snakemake reruns a job whose params changed, so a net in the params would
retrain every finished model when a user raises it, not resume the one that stopped. The training rules
therefore carry the net as a resource (not a rerun trigger): ``rule_settings`` for their params,
``safety_net_resource`` for their resources, and ``TrainConfig.from_rule`` joins the two in the script.

Light on purpose (no torch): the workflow imports it while it parses.
"""

from __future__ import annotations

from typing import Any

SAFETY_NET = "max_minutes"


def rule_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """Training settings for a rule's params: all but the safety net."""
    return {key: value for key, value in settings.items() if key != SAFETY_NET}


def safety_net_resource(settings: dict[str, Any]) -> int | float:
    """The safety net as a rule's resource: ``max_minutes``, or 0 where it is null (a resource cannot be
    null, so 0 stands for no limit)."""
    return settings.get(SAFETY_NET) or 0


def join_safety_net(settings: dict[str, Any], resource: int | float) -> dict[str, Any]:
    """A rule's params' settings with its safety-net resource put back (0: no limit)."""
    if SAFETY_NET in settings:
        raise ValueError(f"{SAFETY_NET} is in the rule's params, where raising it would retrain finished models; "
                         "pass it as the rule's resource (multivec.training.safety_net)")
    if resource < 0:
        raise ValueError(f"resource {SAFETY_NET}={resource}: must be >= 0 (0: no limit)")
    return {**settings, SAFETY_NET: resource or None}
