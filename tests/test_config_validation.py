"""A malformed configuration stops the run before any job, with a message naming the key:
schema errors (config/schema.yaml) and the checks of multivec.config_checks."""

import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from multivec.config_checks import ConfigError, check_config, configfile_arguments, encoder_limits, yaml_problem

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")

ROWS_DUPLICATE = "table2: {rows: [{name: a, kind: bm25}, {name: b, kind: mean_pooled}, {name: a, kind: token_states}]}"

# (override file text, strings the message must contain)
MALFORMED = {
    "ratio_zero": ("table2: {rows: [{name: x, kind: nugget, objective: mt, ratio: 0}]}", ["ratio"]),
    "ratio_above_one": ("table2: {rows: [{name: x, kind: nugget, objective: mt, ratio: 1.5}]}", ["ratio"]),
    "unknown_key_typo": ("nugget: {scorer_layr: 3}", ["scorer_layr"]),
    "wrong_type": ("train: {max_steps: many}", ["max_steps"]),
    "missing_mirror": ("data_mirror: /nonexistent/mirror", ["data_mirror"]),
    "unknown_top_key": ("sed: 13", ["sed"]),
    "unknown_corpus_source": ("corpora: {autoencoding: {sources: [wikitext4]}}", ["wikitext4", "sources"]),
    "negative_lr": ("train: {lr: -1.0}", ["'lr'"]),
    "empty_rows": ("table2: {rows: []}", ["'rows'"]),
    "reserved_row_name": ("table2: {rows: [{name: base_encoder, kind: mean_pooled}]}", ["base_encoder", "'name'"]),
    "nugget_row_without_ratio": ("table2: {rows: [{name: x, kind: nugget, objective: mt}]}", ["'ratio'"]),
    "zero_threads": ("resources: {train: {threads: 0, mem_mb: 1000, runtime: 10}}", ["'threads'"]),
    "noise_deletion_one": ("tsdae: {noise_deletion: 1.0}", ["noise_deletion"]),
    "unknown_device": ("train: {device: gpu}", ["'device'"]),
    "negative_scorer_layer": ("nugget: {scorer_layer: -1}", ["scorer_layer"]),
    "zero_max_tokens": ("table2: {max_tokens: 0}", ["max_tokens"]),
    # multivec.config_checks
    "duplicate_row_names": (ROWS_DUPLICATE, ["table2.rows[2].name", "'a'", "table2.rows[0]"]),
    "ratio_text_not_a_folder": ("table2: {rows: [{name: x, kind: nugget, objective: mt, ratio: 1.0e-5}]}",
                                ["table2.rows[0].ratio", "mt_r1e-05", "0 < ratio <= 1"]),
    "max_tokens_above_positions": ("table2: {max_tokens: 100000}", ["table2.max_tokens", "allowed: 1..512"]),
    "scorer_layer_above_layers": ("nugget: {scorer_layer: 7}", ["nugget.scorer_layer", "allowed: 0..6"]),
    "smoke_scorer_layer_above_layers": ("nugget: {encoder: tiny-random-bert, scorer_layer: 5}",
                                        ["nugget.scorer_layer", "allowed: 0..4"]),
    "max_source_tokens_below_corpus": ("nugget: {max_source_tokens: 64}",
                                       ["corpora.autoencoding.max_tokens", "corpora.translation.max_tokens",
                                        "allowed: 1..64"]),
    "max_source_tokens_above_positions": ("nugget: {max_source_tokens: 1024}",
                                          ["nugget.max_source_tokens", "allowed: 1..512"]),
    "missing_encoder_folder": ("nugget: {encoder: ./no/such/encoder}", ["nugget.encoder", "./no/such/encoder"]),
    "float_seed": ("seed: 13.0", ["seed: 13.0", "integer"]),
    "float_training_seed": ("statistics: {seeds: {tables: [13.0], claims: [13]}}",
                            ["statistics.seeds.tables[0]", "integer"]),
    "duplicate_training_seeds": ("statistics: {seeds: {tables: [13, 13], claims: [13]}}", ["non-unique"]),
    "unknown_claim_skip": ("statistics: {skip_claims: {NOPE: because}}", ["NOPE", "unknown claim id"]),
    "yaml_syntax_error": ("train:\n  max_steps: 5\n   batch_size: [4\n", ["bad.yaml", "line 3"]),
}


def snakemake(*args, cwd=REPO, env_extra=None):
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    env.update(env_extra or {})
    return subprocess.run([SNAKEMAKE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("case", list(MALFORMED))
def test_bad_config_stops_before_any_job(tmp_path, case):
    text, expected = MALFORMED[case]
    bad = tmp_path / "bad.yaml"
    bad.write_text(text + "\n")
    work = tmp_path / "work"
    result = snakemake("-n", "--configfile", str(bad), "--directory", str(work), "results/table2.csv",
                       env_extra={"MULTIVEC_DATA_MIRROR": ""})
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    for part in expected:
        assert part in out, f"{part!r} not in:\n{out}"
    # Stopped while reading the workflow: no DAG, so no job was scheduled, let alone run.
    assert "Job stats" not in out and "\nrule " not in out, out
    assert not (work / "results").exists() and not (work / "data").exists()


def test_null_max_tokens_means_the_encoders_limit(tmp_path):
    override = tmp_path / "null.yaml"
    override.write_text("table2: {max_tokens: null}\n")
    result = snakemake("-n", "--configfile", "config/smoke.yaml", str(override), "--directory", str(tmp_path / "w"),
                       "--", "results/table2.csv", env_extra={"MULTIVEC_DATA_MIRROR": ""})
    assert result.returncode == 0, result.stdout + result.stderr


def _merge(base, override):
    """Snakemake's update_config: nested mappings merge, anything else replaces."""
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value


@pytest.fixture(scope="module")
def demo_config():
    with open(REPO / "config" / "config.yaml") as handle:
        return yaml.safe_load(handle)


def test_check_config_accepts_every_shipped_scale(demo_config):
    assert check_config(demo_config) == []
    for name in ("smoke", "paper"):
        config = copy.deepcopy(demo_config)
        with open(REPO / "config" / f"{name}.yaml") as handle:
            override = yaml.safe_load(handle)
        _merge(config, override)
        notes = check_config(config)
        if name == "paper":  # mBART-50 is a hub id, not on this machine: skipped, and said so
            assert len(notes) == 1 and "facebook/mbart-large-50-many-to-many-mmt" in notes[0]
            assert "not checked" in notes[0]
        else:
            assert notes == []


def test_every_problem_is_reported_at_once(demo_config):
    config = copy.deepcopy(demo_config)
    config["table2"]["rows"].append(dict(config["table2"]["rows"][0]))
    config["nugget"]["scorer_layer"] = 99
    with pytest.raises(ConfigError) as info:
        check_config(config)
    message = str(info.value)
    assert f"table2.rows[{len(config['table2']['rows']) - 1}].name" in message
    assert "nugget.scorer_layer: 99" in message


def test_encoder_limits_come_from_the_encoders_config(tmp_path):
    limits, where = encoder_limits("minilm")
    assert limits == {"positions": 512, "layers": 6} and where.endswith("config.json")
    assert encoder_limits("tiny-random-mbart")[0] == {"positions": 512, "layers": 4}
    (tmp_path / "config.json").write_text('{"max_position_embeddings": 1026, "encoder_layers": 12, '
                                          '"num_hidden_layers": 24}')
    assert encoder_limits(str(tmp_path))[0] == {"positions": 1026, "layers": 12}
    limits, where = encoder_limits("someone/surely-not-cached-model-xyz")
    assert limits is None and "not on this machine" in where


def test_configfile_arguments_and_yaml_problem(tmp_path):
    argv = ["-n", "--configfile", "a.yaml", "b.yaml", "--cores", "1", "--configfile=c.yaml", "target"]
    assert configfile_arguments(argv) == ["a.yaml", "b.yaml", "c.yaml"]
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text("a: 1\n")
    bad.write_text("a:\n  b: 1\n   c: [2\n")
    assert yaml_problem(good) is None
    assert yaml_problem(bad).startswith(f"{bad}, line 3, column")
    assert yaml_problem(tmp_path / "absent.yaml") is None  # Snakemake names a missing file itself
