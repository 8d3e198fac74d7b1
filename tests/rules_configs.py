"""The shipped configs as the workflow merges them, for the tests of multivec.rules (tests/test_rules_*.py)."""

from pathlib import Path

from snakemake.utils import update_config

from multivec.config.yaml_files import read_config_file
from multivec.rules.seed_sets import SeedSets

REPO = Path(__file__).resolve().parents[1]
SCALES = {"demo": [], "smoke": ["smoke"], "paper": ["paper"]}


def scale_config(scale: str = "demo") -> dict:
    """config/config.yaml, then each --configfile of the scale, merged as Snakemake merges them."""
    config = read_config_file(REPO / "config" / "config.yaml")
    for name in SCALES[scale]:
        update_config(config, read_config_file(REPO / "config" / f"{name}.yaml"))
    return config


def seed_sets(config: dict) -> SeedSets:
    """The seed sets of ``config`` with its claims file resolved against the repository, as the workflow does."""
    return SeedSets(config["statistics"], str(REPO / config["statistics"]["claims_file"]))
