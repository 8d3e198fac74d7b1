"""Table 4's rows against the zoo's models (multivec.config.cross_checks.table4_zoo_problems): checked by the config
layer before any job, each problem naming its key path (formerly raised in rules/nugget_ablation_common.smk)."""

import copy
from pathlib import Path

import pytest
from snakemake.utils import update_config

from multivec.config.checks import check_config
from multivec.config.cross_checks import consistency_problems, table4_zoo_problems
from multivec.config.dataclass_config import ConfigError
from multivec.config.yaml_files import read_config_file

REPO = Path(__file__).resolve().parents[1]
# Every shipped scale, as the workflow merges it: the demo config, then each --configfile in turn.
SCALES = {"demo": [], "smoke": ["smoke"], "paper": ["paper"], "rehearsal": ["paper", "rehearsal"], "gpu": ["gpu"]}


def scale_config(scale: str) -> dict:
    config = read_config_file(REPO / "config" / "config.yaml")
    for name in SCALES[scale]:
        update_config(config, read_config_file(REPO / "config" / f"{name}.yaml"))
    return config


@pytest.fixture(scope="module")
def demo():
    return scale_config("demo")


@pytest.mark.parametrize("scale", [s for s in SCALES if all((REPO / "config" / f"{n}.yaml").exists()
                                                            for n in SCALES[s])])
def test_quiet_on_every_shipped_config(scale):
    config = scale_config(scale)
    assert table4_zoo_problems(config) == []
    assert not [p for p in consistency_problems(config) if p.startswith("nugget_ablation")]


def test_nugget_l3_must_be_the_zoos_mt_r01_model(demo):
    """nugget.feedback false makes the zoo's MT r = 0.1 model a no-feedback one; Table 4's NUGGET (l = 3) keeps
    feedback (TABLE4_DEFAULTS), so it would no longer read Table 2's and Fig. 4's model."""
    config = copy.deepcopy(demo)
    config["nugget"]["feedback"] = False
    problems = table4_zoo_problems(config)
    assert any(p.startswith("nugget_ablation: NUGGET (l = 3) must be the MT r = 0.1 model") for p in problems), problems
    assert any("r0.1_l3_learned_nofb" in p for p in problems)


def test_a_row_whose_settings_differ_from_its_zoo_model_is_named_with_its_key_path(demo):
    """The zoo's learned-selector models keep the config's residual; Table 4's rows set residual: true, so a config
    without the residual would train rows that are not the zoo's models they read."""
    config = copy.deepcopy(demo)
    config["nugget_analysis"]["model"]["residual"] = False
    problems = table4_zoo_problems(config)
    index = config["nugget_ablation"]["rows"].index("nugget_l0")
    assert any(p.startswith(f"nugget_ablation.rows[{index}]: row 'nugget_l0': its settings differ from the zoo model")
               and "['residual']" in p for p in problems), problems


def test_a_row_that_does_not_build_is_named_with_its_key_path(demo):
    config = copy.deepcopy(demo)
    del config["nugget_ablation"]["layers"]["9"]
    index = config["nugget_ablation"]["rows"].index("nugget_l9")
    problems = table4_zoo_problems(config)
    assert any(p.startswith(f"nugget_ablation.rows[{index}]: 'nugget_l9' does not build") and "l=9" in p
               for p in problems), problems


def test_check_config_reports_them_before_any_job(demo):
    """check_config (what the Snakefile runs first) stops on them with every problem at once."""
    config = copy.deepcopy(demo)
    config["nugget_analysis"]["model"]["residual"] = False
    with pytest.raises(ConfigError, match=r"nugget_ablation\.rows\[\d\]: row 'nugget_l0'"):
        check_config(config, sources="off")


def test_no_table4_no_check(demo):
    config = copy.deepcopy(demo)
    config["nugget_ablation"]["rows"] = []
    assert table4_zoo_problems(config) == []
