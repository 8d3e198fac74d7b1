"""What a rule asks for, by resource family (multivec.pipeline.rule_resources; rules/common.smk wraps it)."""

import re
from pathlib import Path

import pytest
import yaml

from multivec.pipeline.rule_resources import (
    MissingResourceFamily,
    family_gpu,
    family_resources,
    family_threads,
)

REPO = Path(__file__).resolve().parents[1]

# As config/paper.yaml and config/config.yaml write them: encode without a gpu key at demo scale.
PAPER = {
    "train": {"threads": 8, "mem_mb": 64000, "runtime": 2880, "gpu": 1},
    "encode": {"threads": 4, "mem_mb": 32000, "runtime": 240, "gpu": 1},
    "build": {"threads": 4, "mem_mb": 32000, "runtime": 240},
}
DEMO = {
    "train": {"threads": 1, "mem_mb": 6000, "runtime": 60, "gpu": 0},
    "encode": {"threads": 1, "mem_mb": 6000, "runtime": 30},
    "build": {"threads": 1, "mem_mb": 4000, "runtime": 30},
}


@pytest.mark.parametrize("name", ["train", "encode", "build"])
def test_each_family_gives_its_threads_memory_and_runtime(name):
    assert family_threads(PAPER, name) == PAPER[name]["threads"]
    asked = family_resources(PAPER, name)
    assert asked == {"mem_mb": PAPER[name]["mem_mb"], "runtime": PAPER[name]["runtime"]}
    assert list(asked) == ["mem_mb", "runtime"]  # the order the rules wrote them in


def test_gpu_only_where_the_rule_asks_for_it():
    assert family_resources(PAPER, "train", gpu=True) == {"mem_mb": 64000, "runtime": 2880, "gpu": 1}
    assert family_resources(PAPER, "encode", gpu=True) == {"mem_mb": 32000, "runtime": 240, "gpu": 1}
    assert "gpu" not in family_resources(PAPER, "encode")
    assert list(family_resources(PAPER, "encode", gpu=True)) == ["mem_mb", "runtime", "gpu"]


def test_a_family_without_a_gpu_key_asks_for_none():
    assert family_gpu(DEMO, "encode") == 0 and family_gpu(DEMO, "build") == 0
    assert family_resources(DEMO, "encode", gpu=True) == {"mem_mb": 6000, "runtime": 30, "gpu": 0}
    assert family_gpu(PAPER, "train") == 1


def test_the_result_is_a_fresh_dict_and_the_config_is_left_alone():
    config = {"build": dict(DEMO["build"])}
    asked = family_resources(config, "build", gpu=True)
    asked["mem_mb"] = 1
    assert config == {"build": DEMO["build"]}


def test_a_missing_family_names_the_config_key_and_the_known_families():
    for call in (family_threads, family_resources, family_gpu):
        with pytest.raises(MissingResourceFamily) as error:
            call(DEMO, "trian")
        message = str(error.value)
        assert "resources.trian" in message and "build, encode, train" in message, message
    assert isinstance(error.value, KeyError)  # what a missing config key raised before
    with pytest.raises(MissingResourceFamily, match=r"resources\.build .*\(families in the config: none\)"):
        family_threads({}, "build")


@pytest.mark.parametrize("path", ["config/config.yaml", "config/rehearsal.yaml", "config/paper.yaml"])
def test_every_family_of_the_shipped_configs_resolves(path):
    resources = yaml.safe_load((REPO / path).read_text())["resources"]  # smoke.yaml keeps the demo's
    assert set(resources) == {"train", "encode", "build"}
    for name in resources:
        assert family_threads(resources, name) >= 1
        assert set(family_resources(resources, name, gpu=True)) == {"mem_mb", "runtime", "gpu"}


def test_rules_name_a_family_instead_of_looking_up_the_config():
    """Every rule's threads and resources come through the helpers (rules/common.smk), no raw look-ups."""
    text = "\n".join(path.read_text(encoding="utf-8") for path in sorted((REPO / "rules").glob("*.smk")))
    assert not re.search(r'config\["resources"\]\[', text)
    assert "rule_resources(" not in text
    families = set(re.findall(r'family_(?:threads|resources|gpu)\("(\w+)"', text))
    assert families == {"train", "encode", "build"}
