"""The main targets and the messages a newcomer meets first: one target per paper and per paper's claims, whose
DAGs together are `all`'s (smoke-scale dry runs); a target no rule makes and a --configfile that does not exist,
each answered with what to type instead (multivec.pipeline.targets, multivec.config.yaml_files); the one-GPU
overlay config/gpu.yaml; scripts/install.sh's CUDA torch option."""

import copy
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from snakemake.utils import update_config

from multivec.config.checks import check_config
from multivec.config.yaml_files import check_yaml_files, missing_configfiles_message, read_config_file
from multivec.pipeline.targets import (CLAIM_TARGETS, MAIN_TARGETS, MATRIX_TARGETS, TARGET_RULES, WORK_TARGETS,
                                       close_matches, command_line_targets, requested_targets, unknown_targets)
from multivec.training.distributed import PRECISIONS
from multivec.training.engine import TrainConfig

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
SMOKE = ["--configfile", "config/smoke.yaml"]
PROFILE_NOTICE = "Using workflow specific profile"


def snakemake(*args, cwd=REPO, timeout=600):
    return subprocess.run([SNAKEMAKE, *args], cwd=cwd, env=dict(os.environ, HF_HUB_OFFLINE="1"), capture_output=True,
                          text=True, timeout=timeout)


def planned_jobs(output: str) -> set[tuple[str, str, str]]:
    """(rule, output, wildcards) of every job a dry run lists."""
    jobs = set()
    for block in re.split(r"\n\[[^\]\n]+\]\n", output)[1:]:
        rule = re.match(r"\s*(?:local)?rule (\w+):", block)
        if rule:
            out = re.search(r"^\s+output: (.*)$", block, re.M)
            wildcards = re.search(r"^\s+wildcards: (.*)$", block, re.M)
            jobs.add((rule.group(1), out.group(1) if out else "", wildcards.group(1) if wildcards else ""))
    return jobs


# -- one target per paper ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def smoke_dags(mirror, tmp_path_factory):
    """{target: the jobs of its smoke-scale dry run} for `all`, `claims` and every per-paper target: each run in
    an empty working directory, so every job of its DAG is listed (about 5 s each)."""
    dags = {}
    for target in ("all", *WORK_TARGETS, *MATRIX_TARGETS, "claims", *CLAIM_TARGETS):
        result = snakemake("-n", *SMOKE, "--directory", str(tmp_path_factory.mktemp(target)), target)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        dags[target] = planned_jobs(result.stdout)
    return dags


def _without(jobs, *rules):
    return {job for job in jobs if job[0] not in rules}


def test_the_per_paper_targets_together_are_all(smoke_dags):
    """`all` = the three works, the representation matrix, the claims and the runtime summary, job for job."""
    union = set().union(*(smoke_dags[t] for t in (*WORK_TARGETS, *MATRIX_TARGETS, "claims")))
    assert _without(smoke_dags["all"], "all", "rule_benchmarks") == _without(union, *TARGET_RULES)
    assert {job[0] for job in smoke_dags["all"]} >= {"all", "rule_benchmarks"}


def test_each_paper_target_builds_its_own_tables(smoke_dags):
    tables = {"nugget": {"table2", "table1_tasks", "nugget_table3", "nugget_table4", "nugget_fig4"},
              "subencoder": {"subencoder_eval_tables", "subencoder_data_table7"},
              "distill": {"distill_table", "distill_teachers_table", "distill_loss_curves"}}
    for target, rules in tables.items():
        planned = {job[0] for job in smoke_dags[target]}
        assert target in planned and rules <= planned, (target, sorted(rules - planned))
        others = set().union(*(r for t, r in tables.items() if t != target))
        assert not planned & others, (target, sorted(planned & others))  # no other work's tables
        assert not planned & {"claims_of_work", "claims", "rule_benchmarks"}, target


def test_each_claims_target_builds_its_works_claims(smoke_dags):
    union = set().union(*(smoke_dags[t] for t in CLAIM_TARGETS))
    assert _without(smoke_dags["claims"], "claims") == _without(union, *TARGET_RULES)
    for target in CLAIM_TARGETS:
        work = target.removesuffix("_claims")
        outputs = {job[1] for job in smoke_dags[target] if job[0] == "claims_of_work"}
        assert outputs == {f"results/claims/{work}.csv, results/claims/{work}_comparisons.csv"}, (target, outputs)


# -- a target no rule makes ----------------------------------------------------------------------------------

def test_an_unknown_target_names_the_main_targets(mirror, tmp_path):
    result = snakemake("-n", "--directory", str(tmp_path), "results/table3.csv")
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr
    err = result.stderr
    assert "no rule makes 'results/table3.csv'" in err and "results/nugget_table3_lm.csv" in err, err
    for target in MAIN_TARGETS:
        assert re.search(rf"^  {target} ", err, re.M), (target, err)
    assert "results/table2.csv" in err and "results/distill_table.csv" in err, err
    assert "MissingRuleException" not in result.stdout + err and "Traceback" not in err, err
    assert "Building DAG" not in result.stdout  # stopped before the DAG


def test_a_misspelt_rule_gets_the_rule_and_every_unknown_target_is_named(mirror, tmp_path):
    result = snakemake("-n", *SMOKE, "--directory", str(tmp_path), "nuget", "results/table2.csv", "distil_claims")
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("TargetError")]
    assert len(lines) == 2 and "'nuget'" in lines[0] and "nugget" in lines[0].split("Did you mean", 1)[1], lines
    assert "'distil_claims'" in lines[1] and "distill_claims" in lines[1], lines


def _rule(name, *patterns):
    regexes = [re.compile(p) for p in patterns]
    return SimpleNamespace(name=name, is_producer=lambda path: any(r.fullmatch(path) for r in regexes))


def _workflow(rules, targets=None, mode="DEFAULT"):
    return SimpleNamespace(rules=rules, is_rule=lambda n: n in {r.name for r in rules},
                           dag_settings=None if targets is None else SimpleNamespace(targets=targets),
                           workflow_settings=SimpleNamespace(exec_mode=SimpleNamespace(name=mode)),
                           storage_settings=SimpleNamespace(default_storage_provider=None))


def test_the_check_passes_what_snakemake_would_plan_and_leaves_other_runs_alone():
    wf = _workflow([_rule("table2", r"results/table2\.csv"), _rule("units", r"data/units/[^/]+\.parquet")])
    assert unknown_targets(wf, ["table2", "results/table2.csv", "./results/table2.csv", "data/units/a.parquet",
                                "results/table3.csv", "units2"]) == ["results/table3.csv", "units2"]
    # targets: the DAG settings when Snakemake set them; else the snakemake command line; never a spawned job's
    assert requested_targets(_workflow([], targets={"x"})) == ["x"]
    assert requested_targets(_workflow([], targets={"x"}, mode="REMOTE")) is None
    assert requested_targets(_workflow([]), argv=["/usr/bin/python", "-m", "pytest", "x"]) is None
    assert requested_targets(_workflow([]), argv=[".venv/bin/snakemake", "-n", "all"]) == ["all"]
    main = "/v/lib/python3.11/site-packages/snakemake/__main__.py"
    assert requested_targets(_workflow([]), argv=[main, "nugget", "--cores", "2"]) == ["nugget"]


def test_targets_are_read_from_the_command_line_as_snakemake_reads_them():
    argv = ["-n", "--configfile", "config/paper.yaml", "config/rehearsal.yaml", "--cores", "2", "all", "nugget",
            "--directory", "/tmp/w", "--", "results/table2.csv"]
    assert command_line_targets(argv) == ["all", "nugget", "results/table2.csv"]
    assert command_line_targets(["-n", "--configfile", "config/smoke.yaml", "nugget"]) == []  # a config file


def test_close_matches_prefer_the_same_table_name():
    candidates = ["nugget", "results/nugget_table3_lm.csv", "results/nugget_table3_lm.md", "results/table2.csv"]
    assert close_matches("results/table3.csv", candidates)[:2] == ["results/nugget_table3_lm.csv",
                                                                   "results/nugget_table3_lm.md"]
    assert close_matches("nuget", candidates) == ["nugget"]
    assert close_matches("zzz", candidates) == []


# -- a --configfile that does not exist ----------------------------------------------------------------------

@pytest.mark.parametrize("given", [["config/nope.yaml"], ["config/smoke.yaml", "nugget"]], ids=["typo", "target"])
def test_a_missing_configfile_is_one_line_naming_it_and_the_overlays(given, tmp_path):
    result = snakemake("-n", "--configfile", *given, "--directory", str(tmp_path))
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if not line.startswith(PROFILE_NOTICE)]
    assert len(lines) == 1, result.stderr  # Snakemake's own answer: a 28-line FileNotFoundError traceback
    line = lines[0]
    assert line.startswith(f"ConfigError: --configfile {given[-1]}: no such file"), line
    for overlay in ("config/smoke.yaml", "config/paper.yaml", "config/rehearsal.yaml", "config/gpu.yaml"):
        assert overlay in line, line
    assert "config/claims.yaml" not in line and "config/schema.yaml" not in line, line
    if given[-1] == "nugget":
        assert "put targets before --configfile" in line, line


def test_the_missing_file_message_in_process(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    assert missing_configfiles_message(["config/smoke.yaml"]) is None
    message = missing_configfiles_message(["config/smoke.yaml", "config/nope.yaml"], ["--configfile"])
    assert "\n" not in message and "config/nope.yaml" in message and "config/gpu.yaml" in message
    monkeypatch.chdir(tmp_path)  # no config/ folder here, nor a --snakefile: the file alone is named
    assert missing_configfiles_message(["nope.yaml"]).startswith("--configfile nope.yaml: no such file")
    snakefile = ["-s", str(REPO / "Snakefile"), "--configfile", "nope.yaml"]
    assert "config/gpu.yaml" in missing_configfiles_message(["nope.yaml"], snakefile)
    with pytest.raises(SystemExit):
        check_yaml_files(snakefile, exit_on_error=True)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ConfigError: --configfile nope.yaml"), err


# -- one GPU: config/gpu.yaml --------------------------------------------------------------------------------

def merged(*overlays: str) -> dict:
    """config/config.yaml with the overlays merged in order, as the Snakefile's `configfile:` and Snakemake's
    --configfile merge them (snakemake.utils.update_config)."""
    config = copy.deepcopy(read_config_file(REPO / "config" / "config.yaml"))
    for overlay in overlays:
        update_config(config, read_config_file(REPO / "config" / overlay))
    return config


def test_the_gpu_overlay_trains_every_model_on_cuda_in_mixed_precision():
    config = merged("gpu.yaml")
    assert check_config(copy.deepcopy(config), REPO / "config" / "schema.yaml") is not None  # validates
    for block in (config["train"], config["subencoder"]["train"], config["distill"]["train"]):
        assert block["device"] == "cuda" and block["precision"] in PRECISIONS and block["precision"] != "fp32"
        TrainConfig(device=block["device"], precision=block["precision"])  # the engine's own check, no GPU needed
    assert config["resources"]["train"]["gpu"] == 1 and config["resources"]["encode"]["gpu"] == 1
    # everything else is the demo's
    demo = merged()
    for key in set(demo) - {"train", "subencoder", "distill", "resources"}:
        assert config[key] == demo[key], key
    assert {**config["train"], "device": "cpu", "precision": "fp32"} == demo["train"]
    # as `--configfile config/config.yaml config/gpu.yaml`; at paper scale it changes nothing
    assert merged("config.yaml", "gpu.yaml") == config
    assert merged("paper.yaml", "gpu.yaml") == merged("paper.yaml")


def test_the_gpu_overlay_dry_runs_without_a_gpu(mirror, tmp_path):
    result = snakemake("-n", "--configfile", "config/gpu.yaml", "--directory", str(tmp_path), "results/table2.csv")
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-5000:]
    trains = [block for block in out.split("\nrule ")[1:] if block.startswith("train_nugget:")]
    assert trains and all(re.search(r"resources: .*\bgpu=1\b", block) for block in trains), trains[:1]


# -- the NUGGET zoo trained as long as its effects need: config/nugget_long.yaml -------------------------------

def test_the_long_overlay_trains_the_zoo_in_the_measured_regime_and_keeps_the_bases():
    from multivec.nugget.zoo import BASE_VARIANT
    from multivec.rules.nugget_zoo import NuggetZoo

    demo, gpu = merged(), merged("gpu.yaml")
    config = merged("gpu.yaml", "nugget_long.yaml")
    assert check_config(copy.deepcopy(config), REPO / "config" / "schema.yaml") is not None  # validates
    zoo, demo_zoo = NuggetZoo(config), NuggetZoo(demo)
    ae_r025 = zoo.zoo_train_config(zoo.nugget_variant(0.25), seed=14)
    # the regime results/experiments/nugget_ae_r0.25_learning_rate measured: 24,000 documents read, lr 1e-3
    assert ae_r025["max_steps"] * ae_r025["batch_size"] >= 24_000 and ae_r025["lr"] == 1.0e-3
    assert ae_r025["max_minutes"] > demo["train"]["max_minutes"]  # 1500 CPU steps would trip the demo's net
    # the shared r = 1 bases are the demo's (same settings, so not retrained), apart from the GPU's precision
    base, demo_base = zoo.zoo_train_config(BASE_VARIANT), demo_zoo.zoo_train_config(BASE_VARIANT)
    assert {**base, "device": "cpu", "precision": "fp32"} == demo_base
    # three seeds in the tables as in the claims; nothing else changes from the GPU overlay
    assert config["statistics"]["seeds"]["tables"] == config["statistics"]["seeds"]["claims"] == [13, 14, 15]
    assert {key for key in config if config[key] != gpu[key]} == {"nugget_analysis", "nugget_base", "statistics"}


def test_the_long_overlay_dry_runs_the_nugget_claims_at_three_seeds(mirror, tmp_path):
    result = snakemake("-n", "results/table2.csv", "--configfile", "config/gpu.yaml", "config/nugget_long.yaml",
                       "--directory", str(tmp_path))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-5000:]
    trained = set(re.findall(r"output: models/nugget/ae/r0\.25_l3_learned_fb/seed(\d+)/", out))
    assert trained == {"13", "14", "15"}, trained


# -- scripts/install.sh: a CUDA torch on request ------------------------------------------------------------

def _install(tmp_path, *args, **env):
    """scripts/install.sh against a stub .venv/bin/python that records each call (and whether PIP_FIND_LINKS
    was set): what the script would run, without pip."""
    root = tmp_path / "clone"
    (root / "scripts").mkdir(parents=True)
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / "scripts" / "install.sh").write_text((REPO / "scripts" / "install.sh").read_text())
    stub = root / ".venv" / "bin" / "python"
    stub.write_text('#!/bin/bash\necho "$* | find-links=${PIP_FIND_LINKS-unset}" >> "$(dirname "$0")/../../calls"\n')
    stub.chmod(0o755)
    environment = {k: v for k, v in os.environ.items() if k != "TORCH_INDEX_URL"}
    result = subprocess.run(["bash", str(root / "scripts" / "install.sh"), *args], capture_output=True, text=True,
                            env={**environment, "PIP_FIND_LINKS": "/wheels", **env}, timeout=60)
    calls = (root / "calls").read_text().splitlines() if (root / "calls").exists() else []
    return result, [c for c in calls if "pip install" in c and "torch==" in c]


def test_install_keeps_the_cpu_wheel_by_default_and_takes_a_cuda_index_on_request(tmp_path):
    result, torch = _install(tmp_path / "cpu")
    assert result.returncode == 0 and torch == ["-m pip install -q torch==2.13.0 | find-links=/wheels"], torch
    url = "https://download.pytorch.org/whl/cu126"
    result, torch = _install(tmp_path / "index", TORCH_INDEX_URL=url)
    assert result.returncode == 0 and torch == [f"-m pip install -q --index-url {url} torch==2.13.0 | "
                                                "find-links=unset"], torch
    result, torch = _install(tmp_path / "flag", "--cuda")
    assert result.returncode == 0 and "--index-url https://download.pytorch.org/whl/cu128" in torch[0], torch
    result, torch = _install(tmp_path / "bad", "--gpu")
    assert result.returncode == 2 and not torch and "--cuda" in result.stderr
