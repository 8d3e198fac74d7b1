"""NUGGET's zoo as the rules name it (multivec.rules.nugget_zoo): folders, settings and training inputs."""

import copy

import pytest

from multivec.nugget.configuration import NuggetConfig
from multivec.rules.nugget_zoo import SENTENCE_SHARE, NuggetZoo, zoo_dir, zoo_files
from rules_configs import scale_config


@pytest.fixture(scope="module")
def demo():
    return scale_config("demo")


@pytest.fixture(scope="module")
def zoo(demo):
    return NuggetZoo(demo)


def test_folders():
    assert zoo_dir("mt", "r0.1_l3_learned_fb", 13) == "models/nugget/mt/r0.1_l3_learned_fb/seed13"
    files = zoo_files("ae", "tsdae", "{seed}")
    assert files == {"weights": "models/nugget/ae/tsdae/seed{seed}/model.safetensors",
                     "config": "models/nugget/ae/tsdae/seed{seed}/config.json",
                     "summary": "models/nugget/ae/tsdae/seed{seed}/training_summary.json",
                     "metrics": "models/nugget/ae/tsdae/seed{seed}/metrics.csv"}


def test_table2_rows_map_to_zoo_folders(zoo, demo):
    assert list(zoo.rows) == [row["name"] for row in demo["table2"]["rows"]]
    assert zoo.trained_row_names() == [r["name"] for r in demo["table2"]["rows"] if r["kind"] in ("nugget", "tsdae")]
    assert zoo.model_dir("nugget_mt_r0.1", 14) == "models/nugget/mt/r0.1_l3_learned_fb/seed14"
    assert zoo.model_dir("tsdae_ae", 13) == "models/nugget/ae/tsdae/seed13"
    assert zoo.model_files("nugget_mt_r0.1", 13)["weights"].endswith("r0.1_l3_learned_fb/seed13/model.safetensors")
    assert zoo.base_dir("mt") == f"models/nugget/mt/base_r1/seed{demo['seed']}"


def test_an_untrained_row_has_no_model(zoo):
    """A caller's error (the rules ask only for trained rows), not a config one."""
    with pytest.raises(ValueError, match="row 'bm25' of kind 'bm25' is not trained"):
        zoo.model_dir("bm25", 13)
    with pytest.raises(ValueError, match="not trained"):
        zoo.model_files("colbart", 13)


def test_settings(zoo, demo):
    assert zoo.training_seed(None) == demo["seed"] and zoo.training_seed("14") == 14
    assert zoo.train_config("15") == {**demo["train"], "seed": 15}
    base = zoo.zoo_train_config("base_r1", 13)
    assert base == {**demo["train"], **demo["nugget_analysis"]["train"], **demo["nugget_base"]["train"], "seed": 13}
    assert zoo.long_train_config(13) == {**demo["train"], **demo["nugget_analysis"]["train"], "seed": 13}
    nugget = zoo.nugget_model_config("mt", 0.1, "14")
    assert nugget["ratio"] == 0.1 and nugget["seed"] == 14 and nugget["objective"] == "mt"
    assert zoo.long_model_config("mt", "0.1", "14") == nugget


def test_the_tsdae_row_trains_unfrozen(zoo):
    """TSDAE (section 6.1.2): one mean-pooled vector, nothing frozen, deletion noise; the path's seed trains it."""
    cfg = NuggetConfig.from_dict(zoo.tsdae_model_config("ae"))
    assert cfg.bottleneck == "mean" and cfg.frozen_bottom == -1 and cfg.noise_deletion > 0
    assert zoo.tsdae_model_config("ae", "14")["seed"] == 14


def test_ratio_zero_is_the_one_vector_model(zoo):
    assert zoo.long_variant("0") == zoo.long_variant(0.0) == "tsdae"
    assert zoo.long_model_dir("ae", "0", 13) == "models/nugget/ae/tsdae/seed13"
    assert zoo.long_variant("0.25") == "r0.25_l3_learned_fb"
    assert zoo.long_model_files("ae", "0.25", 13) == zoo_files("ae", "r0.25_l3_learned_fb", 13)


def test_training_inputs(zoo):
    base = zoo.zoo_train_inputs("ae", "base_r1")
    assert base == {"train": "data/built/corpora/autoencoding/train.jsonl",
                    "dev": "data/built/corpora/autoencoding/dev.jsonl"}
    nugget = zoo.zoo_train_inputs("mt", "r0.1_l3_learned_fb")
    assert nugget["init"] == f"{zoo.base_dir('mt')}/model.safetensors" and "sentence_share" not in nugget
    assert zoo.zoo_train_inputs("mt", "rsb_l3_learned_fb")["sentence_share"] == SENTENCE_SHARE
    figure = zoo.figure_model_inputs("ae", "0.1", 14)
    assert figure["dev"] == "data/built/corpora/autoencoding/dev.jsonl"
    assert figure["weights"] == "models/nugget/ae/r0.1_l3_learned_fb/seed14/model.safetensors"


def test_frozen_bottom(zoo, demo):
    assert zoo.shares_frozen_bottom("nugget_mt_r0.1") and not zoo.shares_frozen_bottom("tsdae_mt")
    assert not zoo.shares_frozen_bottom("bm25")
    config = copy.deepcopy(demo)
    config["table2"]["share_frozen_bottom"] = False
    assert not NuggetZoo(config).shares_frozen_bottom("nugget_mt_r0.1")
    assert set(zoo.frozen_bottom_config()) == {"encoder", "architecture", "src_lang", "scorer_layer", "seed",
                                               "target_tokenizer"}


def test_the_shared_frozen_bottom_builds_its_nugget_config_at_every_scale():
    """frozen_bottom_states builds NuggetConfig from these keys; without the target tokenizer NuggetConfig's default
    'bpe' refuses mBART (the paper DAG's job failed so in the rehearsal)."""
    for scale in ("demo", "smoke", "paper"):
        settings = NuggetZoo(scale_config(scale)).frozen_bottom_config()
        cfg = NuggetConfig(**settings)
        if scale == "paper":
            assert cfg.architecture == "mbart"
