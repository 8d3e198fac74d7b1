"""The SLURM profile against a real SLURM.

``scripts/slurm/start_local_slurm.sh`` installs (apt-get) and starts a single-node SLURM on this machine
(munge, MariaDB + slurmdbd, slurmctld, slurmd; partitions ``cpu`` and ``gpu``, the latter without GPUs;
account ``multivec``). It needs root and apt-get: elsewhere these tests are skipped, saying why, except
under CI (``CI`` set), where they must run and fail instead. The session fixture ``local_slurm`` (tests/conftest.py)
starts it once and stops it when the session ends, if it started it; tests/slurm_accounting.py reads jobs back.

A real DAG goes through ``--profile``: a copy of ``profiles/slurm`` with its placeholders filled in by
``multivec.pipeline.slurm_profile`` (what ``scripts/slurm/site_profile.py`` does for a user), at smoke scale
in a temporary copy of the workflow. Then, from SLURM itself:

(a) ``sacct`` reads back every job's account, partition, memory, time limit and CPUs, which must be
    what Snakemake resolved from the profile and the config (its log lists them per job);
(b) a GPU request is written as the executor plugin writes it (``--gpus=1`` in the sbatch call), and a
    GPU job on a partition without GPUs stops at once with a clear message: the pre-flight check
    (``multivec.pipeline.slurm_preflight``, the Snakefile's ``onstart``) names rule, partition and GPUs
    before anything is submitted; without it (``--no-hooks``) sbatch's refusal reaches Snakemake's error;
(c) the shipped profile, unfilled (``CHANGE_ME_...``): the pre-flight check names the unknown account and
    partitions and nothing runs or is submitted, not even a download;
(d) a node lost while a rule runs, with the submitting Snakemake killed too: the rerun says how to
    unlock, then ``--rerun-incomplete`` (set in the profile) reruns the incomplete job;
(e) a job killed mid-training (SIGKILL right after its first checkpoint, by the training engine's
    ``MULTIVEC_KILL_AFTER_STEP`` hook inside the SLURM job: at smoke scale a step takes ~0.1 s, too
    short to aim ``scancel`` between checkpoints) resumes from its checkpoint;
and after (d) and (e) every output is byte-identical to the uninterrupted run's.

The pre-flight check's rules (time limits, memory, CPUs, associations, hostlists) are also tested
below without a cluster, on recorded ``scontrol`` output.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from multivec.pipeline.slurm_preflight import (PreflightError, Request, check_requests, parse_gpus, parse_minutes,
                                               parse_records, problems, read_cluster, request_of_job)
from multivec.pipeline.slurm_profile import PLACEHOLDERS, ProfileError, site_profile_text, write_site_profile
from slurm_accounting import (ACCOUNT, CPU_PARTITION, GPU_PARTITION, jobs_of_run, mismatched_jobs, rule_of, run,
                              run_id, sacct, submitted)

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")

# The DAG run through SLURM: smoke scale, one NUGGET model (and the shared base model it starts from) from
# its corpus to its encoding of the PI task, plus a job on the profile's default resources
# (distill_eval_task has none of its own): 4 rule families, on both partitions. Which model folder the
# encoding reads is taken from the DAG (the jobs Snakemake printed), not written here. The rehearsal (the paper
# DAG on miniature inputs) swaps in here: its config file and targets.
DAG_CONFIG = ["--configfile", "config/smoke.yaml"]
ENCODING = "data/encodings/nugget_ae_r0.25/seed13/pi"
DAG_TARGETS = [ENCODING, "data/built/distill/eval_lee.jsonl"]
LOCAL_RULES = {"download", "gensim_test_data"}  # localrules: run where Snakemake runs, never submitted
# Outputs that must come out byte-identical after kills and reruns (besides the model's weights and config).
COMPARED = [f"{ENCODING}/vectors.safetensors", f"{ENCODING}/documents.jsonl", f"{ENCODING}/info.json"]
# Test only: the plugin's first status check comes 40 s after a submission by default.
FAST_POLLING = ["--slurm-init-seconds-before-status-checks", "1"]
RUN_TIMEOUT = 900  # s, a guard against a hang, never a measurement


# -- the pre-flight check's rules, without a cluster -----------------------------------------------------

SCONTROL_PARTITIONS = (
    "PartitionName=cpu AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=YES MaxTime=1-00:00:00 "
    "Nodes=n[1-2] State=UP MaxMemPerNode=UNLIMITED TRES=cpu=8,mem=64000M\n"
    "PartitionName=gpu AllowAccounts=lab,other DenyAccounts=(null) Default=NO MaxTime=UNLIMITED Nodes=g1 "
    "State=UP MaxMemPerNode=30000\n"
    "PartitionName=old AllowAccounts=ALL Default=NO MaxTime=30:00 Nodes=n1 State=DOWN MaxMemPerNode=UNLIMITED\n")
SCONTROL_NODES = (
    "NodeName=n1 Arch=x86_64 CPUTot=4 Gres=(null) OS=Linux 6.1.0 #1 SMP PREEMPT_DYNAMIC Debian  RealMemory=32000 "
    "State=IDLE\n"
    "NodeName=n2 CPUTot=4 Gres=(null) RealMemory=16000 State=IDLE\n"
    "NodeName=g1 CPUTot=16 Gres=gpu:a100:2(S:0-1),shard:8 RealMemory=64000 State=MIXED\n")
SACCTMGR = "lab|\nother|gpu\n"


def fake_run(command):
    """Recorded answers of the SLURM commands read_cluster runs."""
    joined = " ".join(command)
    if joined == "scontrol show partition -o":
        return SCONTROL_PARTITIONS
    if joined == "scontrol show node -o":
        return SCONTROL_NODES
    if joined == "scontrol show hostnames n[1-2]":
        return "n1\nn2\n"
    if command[:4] == ["sacctmgr", "-n", "-P", "list"]:
        return SACCTMGR
    raise AssertionError(f"unexpected command {command}")


def request(**changes) -> Request:
    fields = dict(rule="train_nugget", account="lab", partition="cpu", cpus=2, mem_mb=8000, runtime_min=60, gpus=0,
                  origins={"slurm_account": "default-resources", "slurm_partition": "set-resources train_nugget",
                           "mem_mb": "rule train_nugget's resources", "runtime": "rule train_nugget's resources",
                           "gpu": "rule train_nugget's resources", "threads": "rule train_nugget's threads"})
    fields.update(changes)
    return Request(**fields)


def test_slurm_time_limits_memory_gpus_and_records_are_read():
    assert [parse_minutes(v) for v in ["UNLIMITED", "7-00:00:00", "1:30:00", "45:00", "90", "2-12", "0:30"]] \
        == [None, 10080, 90, 45, 90, 3600, 1]
    with pytest.raises(ValueError, match="unreadable SLURM time limit"):
        parse_minutes("soon")
    assert [parse_gpus(g) for g in ["(null)", "gpu:4", "gpu:a100:2(S:0-1),gpu:v100:1", "gpu", "shard:8"]] \
        == [0, 4, 3, 1, 0]
    node = parse_records(SCONTROL_NODES)[0]
    assert node["OS"] == "Linux 6.1.0 #1 SMP PREEMPT_DYNAMIC Debian" and node["RealMemory"] == "32000"
    cluster = read_cluster(fake_run, user="ada")
    assert cluster.partitions["cpu"].nodes == ("n1", "n2") and cluster.partitions["cpu"].default
    assert cluster.partitions["gpu"].allow_accounts == {"lab", "other"}
    assert cluster.partitions["gpu"].max_mem_per_node_mb == 30000 and cluster.partitions["gpu"].max_time_min is None
    assert cluster.nodes["g1"].gpus == 2 and cluster.nodes["n2"].memory_mb == 16000
    assert cluster.associations == {"lab": None, "other": frozenset({"gpu"})}


def test_preflight_names_every_kind_of_problem_and_where_it_was_set():
    cluster = read_cluster(fake_run, user="ada")
    assert problems([request(), request(partition=None), request(partition="gpu", gpus=1, mem_mb=30000)],
                    cluster) == []
    cases = {
        "partition 'gpus' does not exist on this cluster (its partitions: cpu, gpu, old)":
            request(partition="gpus"),
        "account 'nobody' is not an account of user ada (sacctmgr associations: lab, other)":
            request(account="nobody"),
        "account 'other' may not use partition 'cpu': user ada's association with it covers only gpu":
            request(account="other"),
        "partition 'old' is DOWN: its jobs would wait until it is UP": request(partition="old", runtime_min=20),
        "runtime=61 min exceeds the MaxTime of partition 'old' (30 min)": request(partition="old", runtime_min=61),
        "5 CPUs per task exceed the largest node of partition 'cpu' (4 CPUs)": request(cpus=5),
        "mem_mb=32001 exceeds what partition 'cpu' grants a job (32000 MB: largest node 32000 MB)":
            request(mem_mb=32001),
        "mem_mb=30001 exceeds what partition 'gpu' grants a job (30000 MB: largest node 64000 MB, MaxMemPerNode "
        "30000 MB)": request(partition="gpu", mem_mb=30001),
        "1 GPU requested on partition 'cpu', which has no GPU": request(gpus=1),
        "3 GPUs requested on partition 'gpu', which has at most 2 GPUs per node": request(partition="gpu", gpus=3),
        # every rule runs one process: a second GPU would sit idle and the batch of a step would not grow with it
        "2 GPUs requested, but every rule runs one process on one GPU (no torchrun): 1 would sit idle, and a "
        "training step would still see train.batch_size x train.grad_accumulation documents":
            request(partition="gpu", gpus=2),
    }
    for expected, req in cases.items():
        found = problems([req], cluster)
        assert any(expected in line for line in found), (expected, found)
    # one line per problem, with every rule, the job count and where the value was set
    found = problems([request(rule="a", gpus=1), request(rule="b", gpus=1), request(rule="b", gpus=1)], cluster)
    assert found == ["1 GPU requested on partition 'cpu', which has no GPU; sbatch would refuse the job (\"Requested "
                     "node configuration is not available\"): 3 jobs of rules a, b (set by rule train_nugget's "
                     "resources)"]
    partition_line = problems([request(partition="x")], cluster)[0]
    assert partition_line.endswith("1 job of rule train_nugget (set by set-resources of rule train_nugget)")
    with pytest.raises(PreflightError, match=r"nothing was run or submitted; 1 problem:\n  - account 'nobody'"):
        check_requests([request(account="nobody")], run=fake_run, user="ada")
    assert "2 jobs fit the cluster" in check_requests([request(), request(partition="gpu")], run=fake_run, user="ada")


def test_preflight_says_when_slurm_cannot_be_asked():
    def no_slurm(command):
        raise RuntimeError(f"`{command[0]}` is not on PATH")

    with pytest.raises(PreflightError, match="cannot read the cluster: `scontrol` is not on PATH"):
        check_requests([request()], run=no_slurm, user="ada")

    def no_accounting(command):
        if command[0] == "sacctmgr":
            raise RuntimeError("`sacctmgr ...` failed (exit 1): Connection refused")
        return fake_run(command)

    def no_associations(command):  # accounting without associations: SLURM decides, as the plugin lets it
        return "" if command[0] == "sacctmgr" else fake_run(command)

    assert problems([request(account="anything")], read_cluster(no_associations, user="ada")) == []
    assert check_requests([request()], run=no_associations, user="ada").endswith(
        "; accounts not checked: sacctmgr lists no association of user ada)")
    found = problems([request()], read_cluster(no_accounting, user="ada"))
    assert found == ["the accounts of user ada cannot be read, so neither this check nor the executor plugin can "
                     "validate slurm_account: `sacctmgr ...` failed (exit 1): Connection refused"]


def test_request_of_a_job_is_what_the_executor_plugin_submits():
    rule = SimpleNamespace(name="encode_task", resources={"mem_mb": 1, "runtime": 1, "gpu": 1})
    job = SimpleNamespace(rule=rule, threads=4, resources={
        "slurm_account": "lab", "slurm_partition": "gpu", "mem_mb_per_cpu": 1000, "runtime": 30, "gres": "gpu:a100:2"})
    req = request_of_job(job, {"encode_task": {"slurm_partition": "gpu"}})
    asked = (req.account, req.partition, req.cpus, req.mem_mb, req.runtime_min, req.gpus)
    assert asked == ("lab", "gpu", 4, 4000, 30, 2)
    assert req.origins["slurm_partition"] == "set-resources encode_task"
    assert req.origins["slurm_account"] == "default-resources"
    assert req.origins["runtime"] == "rule encode_task's resources"
    job.resources = {"cpus_per_task": 2, "mem_mb": 500, "gpu": 1, "runtime": "<TBD>"}
    req = request_of_job(job, {})
    asked = (req.account, req.partition, req.cpus, req.mem_mb, req.runtime_min, req.gpus)
    assert asked == (None, None, 2, 500, None, 1)


def test_site_profile_fills_every_placeholder_and_keeps_the_rest(tmp_path):
    shipped = (REPO / "profiles/slurm/config.yaml").read_text()
    for placeholder in PLACEHOLDERS.values():
        assert f'"{placeholder}"' in shipped
    written = write_site_profile(tmp_path / "site", "lab", "short", "a100") / "config.yaml"
    profile = yaml.safe_load(written.read_text())
    original = yaml.safe_load(shipped)
    assert profile["default-resources"] == {**original["default-resources"], "slurm_partition": "short",
                                            "slurm_account": "lab"}
    assert set(profile["set-resources"]) == set(original["set-resources"])
    assert all(r == {"slurm_partition": "a100"} for r in profile["set-resources"].values())
    assert {k: v for k, v in profile.items() if k not in {"default-resources", "set-resources"}} == \
        {k: v for k, v in original.items() if k not in {"default-resources", "set-resources"}}
    assert "slurm-init-seconds-before-status-checks: 1" in site_profile_text(
        shipped, "lab", "short", "a100", extra={"slurm-init-seconds-before-status-checks": 1})
    with pytest.raises(ProfileError, match="not a SLURM name"):
        site_profile_text(shipped, "lab; rm -rf ~", "short", "a100")
    with pytest.raises(ProfileError, match="extra keys already in the profile: jobs"):
        site_profile_text(shipped, "lab", "short", "a100", extra={"jobs": 1})
    with pytest.raises(ProfileError, match="no \"CHANGE_ME_account\" any more"):
        site_profile_text(shipped.replace("CHANGE_ME_account", "x"), "lab", "short", "a100")
    with pytest.raises(ProfileError, match="is the shipped profile itself"):
        write_site_profile(REPO / "profiles/slurm", "lab", "short", "a100")
    shown = subprocess.run([sys.executable, str(REPO / "scripts/slurm/site_profile.py"), "--account", "lab",
                            "--cpu-partition", "short", "--gpu-partition", "a100", str(tmp_path / "cli")],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert (tmp_path / "cli/config.yaml").read_text() == (tmp_path / "site/config.yaml").read_text()


# -- a real SLURM ------------------------------------------------------------------------------------------

def _env(mirror, **extra) -> dict:
    return dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1", MULTIVEC_DATA_MIRROR=str(mirror), **extra)


def _snakemake_args(targets, profile, *extra, overlays=()) -> list[str]:
    # targets first: --configfile takes every word after it; every config file after one --configfile
    # (Snakemake keeps only the last flag's files, and the workflow refuses the flag given twice)
    return [SNAKEMAKE, *targets, "--profile", str(profile), *DAG_CONFIG, *overlays, *FAST_POLLING, *extra]


def _snakemake(work, mirror, targets, profile, *extra, env_extra=None, overlays=()):
    result = subprocess.run(_snakemake_args(targets, profile, *extra, overlays=overlays), cwd=work,
                            env=_env(mirror, **(env_extra or {})),
                            capture_output=True, text=True, timeout=RUN_TIMEOUT)
    result.out = result.stdout + result.stderr
    return result


def _wait(condition, what: str, seconds: float = 300):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {seconds} s")
        time.sleep(0.2)


@pytest.fixture(scope="module")
def cluster_run(local_slurm, mirror, copy_workflow, tmp_path_factory):
    """The DAG through the site profile on the local SLURM, uninterrupted: the reference run."""
    root = tmp_path_factory.mktemp("slurm")
    work = copy_workflow(root / "reference")
    profile = write_site_profile(root / "profile", ACCOUNT, CPU_PARTITION, GPU_PARTITION)
    since = datetime.now() - timedelta(minutes=1)
    result = _snakemake(work, mirror, DAG_TARGETS, profile)
    assert result.returncode == 0, result.out[-6000:]
    planned = jobs_of_run(result.out)
    encode = [job for job in planned if job["rule"] == "encode_task"]
    assert len(encode) == 1, planned
    model = next(Path(f).parent for f in encode[0]["input"] if f.endswith("model.safetensors"))
    trainer = next(job for job in planned if f"{model}/model.safetensors" in job["output"])
    return SimpleNamespace(root=root, work=work, profile=profile, planned=planned, out=result.out, model=str(model),
                           train_log=trainer["log"][0], jobs=sacct(run_id(result.out), since), node=local_slurm.node)


@pytest.mark.e2e
def test_every_job_ran_with_the_account_partition_memory_and_time_the_profile_asked_for(cluster_run):
    asked, jobs = submitted(cluster_run.planned), cluster_run.jobs
    rules = {job["rule"] for job in asked}
    assert {job["rule"] for job in cluster_run.planned if job["local"]} == LOCAL_RULES  # ran here, not in SLURM
    assert f"SLURM pre-flight check: {len(asked)} jobs fit the cluster" in cluster_run.out
    assert sorted(rule_of(j["Comment"], rules) for j in jobs) == sorted(job["rule"] for job in asked)
    assert not mismatched_jobs(cluster_run.planned, jobs)
    # what the profile and the config ask for, by rule family
    profile = yaml.safe_load((cluster_run.profile / "config.yaml").read_text())
    smoke = {**yaml.safe_load((REPO / "config/config.yaml").read_text())["resources"],
             **(yaml.safe_load((REPO / "config/smoke.yaml").read_text()).get("resources") or {})}
    by_rule = {rule_of(j["Comment"], rules): j for j in jobs}
    defaults = profile["default-resources"]
    assert by_rule["distill_eval_task"]["ReqMem"] == f"{defaults['mem_mb']}M"  # no resources of its own
    assert parse_minutes(by_rule["distill_eval_task"]["Timelimit"]) == defaults["runtime"]
    assert by_rule["train_nugget"]["ReqMem"] == f"{smoke['train']['mem_mb']}M"
    assert parse_minutes(by_rule["train_nugget"]["Timelimit"]) == smoke["train"]["runtime"]
    assert parse_minutes(by_rule["autoencoding_corpus"]["Timelimit"]) == smoke["build"]["runtime"]
    assert parse_minutes(by_rule["encode_task"]["Timelimit"]) == smoke["encode"]["runtime"]
    on_gpu_partition = {rule for rule in by_rule if rule in profile["set-resources"]}
    assert {"train_nugget", "encode_task"} <= on_gpu_partition and "autoencoding_corpus" not in on_gpu_partition
    assert all(by_rule[r]["Partition"] == (GPU_PARTITION if r in on_gpu_partition else CPU_PARTITION)
               for r in by_rule)
    assert {j["Account"] for j in jobs} == {ACCOUNT}
    assert len([j for j in jobs if rule_of(j["Comment"], rules) == "train_nugget"]) >= 2  # base model, then ours


def _ref_copy(cluster_run, name: str) -> Path:
    """A copy of the reference run's folder (file times kept, so nothing is out of date)."""
    work = cluster_run.root / name
    shutil.copytree(cluster_run.work, work, symlinks=True)
    shutil.rmtree(work / ".snakemake/slurm_logs", ignore_errors=True)
    return work


@pytest.mark.e2e
def test_gpu_job_on_a_partition_without_gpus_stops_with_a_clear_message(cluster_run, mirror):
    work = _ref_copy(cluster_run, "gpu")
    shutil.rmtree(work / cluster_run.model)
    (work / "gpu.yaml").write_text("resources:\n  train: {gpu: 1}\n")  # as config/paper.yaml asks
    target = [f"{cluster_run.model}/model.safetensors"]
    since = datetime.now() - timedelta(minutes=1)

    checked = _snakemake(work, mirror, target, cluster_run.profile, overlays=("gpu.yaml",))
    assert checked.returncode != 0
    assert ("SLURM pre-flight check (multivec.pipeline.slurm_preflight): nothing was run or submitted; 1 problem:\n"
            f"  - 1 GPU requested on partition '{GPU_PARTITION}', which has no GPU; sbatch would refuse the job "
            "(\"Requested node configuration is not available\"): 1 job of rule train_nugget (set by rule "
            "train_nugget's resources)") in checked.out, checked.out[-4000:]
    assert sacct(run_id(checked.out), since) == []

    # Without the pre-flight check: the plugin writes the request as --gpus=1, sbatch refuses it at once,
    # and Snakemake's error shows sbatch's message and call.
    refused = _snakemake(work, mirror, target, cluster_run.profile, "--no-hooks", overlays=("gpu.yaml",))
    assert refused.returncode != 0
    error = refused.out[refused.out.index("Error in rule train_nugget"):]
    assert "SLURM sbatch failed. The error message was 'sbatch: error: Batch job submission failed: Requested " \
           "node configuration is not available'" in error, error[:3000]
    call = re.search(r"sbatch call:\s+(sbatch .*?) --wrap=", error).group(1)
    assert f" -p {GPU_PARTITION} " in call and call.endswith("--gpus=1") and f"-A {ACCOUNT}" in call, call
    assert "--ntasks" not in call and "--cpus-per-task=1" in call and "--mem 6000" in call and " -t 60 " in call


@pytest.mark.e2e
def test_unfilled_profile_stops_before_anything_runs_naming_account_and_partitions(cluster_run, mirror,
                                                                                   copy_workflow):
    work = copy_workflow(cluster_run.root / "unfilled")
    since = datetime.now() - timedelta(minutes=1)
    result = _snakemake(work, mirror, DAG_TARGETS, REPO / "profiles/slurm")
    assert result.returncode != 0
    message = result.out[result.out.index("SLURM pre-flight check"):]
    assert message.startswith("SLURM pre-flight check (multivec.pipeline.slurm_preflight): nothing was run or submitted; "
                              "3 problems:\n"), message
    asked = submitted(cluster_run.planned)
    on_gpu = {job["rule"] for job in asked if job["resources"]["slurm_partition"] == GPU_PARTITION}
    on_cpu = {job["rule"] for job in asked} - on_gpu
    count = {rules: sum(job["rule"] in rules for job in asked) for rules in (frozenset(on_gpu), frozenset(on_cpu))}
    assert (f"  - account 'CHANGE_ME_account' is not an account of user root (sacctmgr associations: {ACCOUNT}, root): "
            f"{len(asked)} jobs of rules {', '.join(sorted(on_cpu | on_gpu))} (set by default-resources)\n"
            ) in message
    assert (f"  - partition 'CHANGE_ME_cpu_partition' does not exist on this cluster (its partitions: cpu, gpu): "
            f"{count[frozenset(on_cpu)]} jobs of rules {', '.join(sorted(on_cpu))} (set by default-resources)\n"
            ) in message
    assert (f"  - partition 'CHANGE_ME_gpu_partition' does not exist on this cluster (its partitions: cpu, gpu): "
            f"{count[frozenset(on_gpu)]} jobs of rules {', '.join(sorted(on_gpu))} (set by set-resources of rules "
            f"{', '.join(sorted(on_gpu))})\n") in message
    assert "scripts/slurm/site_profile.py" in message
    assert sacct(run_id(result.out), since) == []
    assert not (work / "data").exists()  # not even the local downloads ran


@pytest.fixture(scope="module")
def interrupted(cluster_run, mirror, local_slurm):
    """The reference run's model and encoding rebuilt through two failures:
    1. the training job is killed right after its first checkpoint; Snakemake stops;
    2. rerun: training resumes; while the next rule (encode_task) runs, the submitting Snakemake is killed
       and the node is lost (set DOWN: SLURM ends its job as NODE_FAIL); the output the job had begun is
       imitated by a truncated file (the real write takes a fraction of a second); the node comes back;
    3. rerun: Snakemake says to --unlock; unlocked, it reruns the incomplete job, keeping the finished model."""
    work = _ref_copy(cluster_run, "interrupted")
    # killed right after its first checkpoint: the training settings are those the reference run recorded
    checkpoint = work / cluster_run.model / "checkpoint"
    train = json.loads((checkpoint / json.loads((checkpoint / "latest.json").read_text())["folder"] /
                        "run_config.json").read_text())["train"]
    kill_after = train["checkpoint_every"]
    assert kill_after < train["max_steps"], f"no checkpoint before the last step: {train}"
    shutil.rmtree(work / cluster_run.model)
    shutil.rmtree(work / ENCODING)
    since = datetime.now() - timedelta(minutes=1)
    killed = _snakemake(work, mirror, [ENCODING], cluster_run.profile,
                        env_extra={"MULTIVEC_KILL_AFTER_STEP": str(kill_after)})
    after_kill = {"checkpoints": sorted(p.name for p in (work / cluster_run.model / "checkpoint").glob("step_*")),
                  "weights": (work / cluster_run.model / "model.safetensors").exists()}

    runner = subprocess.Popen(_snakemake_args([ENCODING], cluster_run.profile), cwd=work, env=_env(mirror),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def running_encode():
        if runner.poll() is not None:
            raise AssertionError(f"the rerun ended before encode_task ran:\n{runner.stdout.read()[-6000:]}")
        listed = run(["squeue", "-h", "-o", "%i|%T|%k"])
        return next((line.split("|")[0] for line in listed.splitlines() if "|RUNNING|rule_encode_task" in line), None)

    try:
        _wait(lambda: running_encode() is not None, "encode_task running")
        lost_job = running_encode()
    finally:
        runner.send_signal(signal.SIGKILL)  # the submitting session is lost too
        second = runner.communicate(timeout=60)[0]
    run(["scontrol", "update", f"nodename={local_slurm.node}", "state=down", "reason=test: node lost"])
    try:
        _wait(lambda: run(["sacct", "-X", "-n", "-j", lost_job, "-o", "State"]).strip() not in {"RUNNING", ""},
              f"SLURM ending job {lost_job} on the lost node", seconds=120)
        lost_state = run(["sacct", "-X", "-n", "-j", lost_job, "-o", "State"]).strip()
        partial = work / ENCODING / "vectors.safetensors"
        began = (work / ENCODING).exists()
        partial.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes((cluster_run.work / ENCODING / "vectors.safetensors").read_bytes()[:100])
    finally:
        if run(["sinfo", "-h", "-n", local_slurm.node, "-o", "%T"]).strip().startswith(("down", "drain")):
            run(["scontrol", "update", f"nodename={local_slurm.node}", "state=resume"])
    _wait(lambda: run(["sinfo", "-h", "-n", local_slurm.node, "-o", "%T"]).strip() in {"idle", "mixed"},
          f"node {local_slurm.node} back", seconds=120)
    # Snakemake's record of the job it had submitted and never saw end: what --rerun-incomplete acts on
    marker = work / ".snakemake/incomplete" / base64.urlsafe_b64encode(ENCODING.encode()).decode()
    incomplete = json.loads(marker.read_text()) if marker.exists() else None
    locked = _snakemake(work, mirror, [ENCODING], cluster_run.profile)
    unlocked = _snakemake(work, mirror, [ENCODING], cluster_run.profile, "--unlock")
    assert unlocked.returncode == 0, unlocked.out
    final = _snakemake(work, mirror, [ENCODING], cluster_run.profile)
    return SimpleNamespace(work=work, kill_after=kill_after, killed=killed, after_kill=after_kill, second=second,
                           lost_job=lost_job, lost_state=lost_state, began=began, incomplete=incomplete,
                           marker_left=marker.exists(), locked=locked, final=final,
                           jobs=sacct(run_id(killed.out), since))


@pytest.mark.e2e
def test_job_killed_mid_training_resumes_to_the_same_model(interrupted, cluster_run):
    killed = interrupted.killed
    assert killed.returncode != 0
    assert [j["State"] for j in interrupted.jobs if j["Comment"].startswith("rule_train_nugget")] == ["FAILED"]
    assert re.search(r"SLURM-job '\d+' failed, SLURM status is: 'FAILED'", killed.out), killed.out[-4000:]
    step = interrupted.kill_after
    assert interrupted.after_kill == {"checkpoints": [f"step_{step:08d}"], "weights": False}
    log = (interrupted.work / cluster_run.train_log).read_text()
    assert f"resuming {cluster_run.model} from step {step}" in log, log[-3000:]
    assert "rule train_nugget:" in interrupted.second and "rule encode_task:" in interrupted.second
    for name in ("model.safetensors", "config.json"):
        path = f"{cluster_run.model}/{name}"
        assert (interrupted.work / path).read_bytes() == (cluster_run.work / path).read_bytes(), path


@pytest.mark.e2e
def test_lost_node_rerun_incomplete_picks_up_with_the_same_outputs(interrupted, cluster_run):
    assert interrupted.lost_state == "NODE_FAIL", interrupted.lost_state
    assert not interrupted.began  # killed while its job started: the truncated file stands for its partial write
    locked = interrupted.locked
    assert locked.returncode != 0 and "LockException" in locked.out and "--unlock" in locked.out, locked.out[-3000:]
    final = interrupted.final
    assert final.returncode == 0, final.out[-6000:]
    assert interrupted.incomplete == {"external_jobid": interrupted.lost_job}
    # --rerun-incomplete (profile): the incomplete output is forced to rerun (without it: IncompleteFilesException)
    assert re.search(r"rule encode_task:\n(    .*\n)*?    reason: Forced execution\n", final.out), final.out[-6000:]
    assert not interrupted.marker_left
    assert "rule train_nugget:" not in final.out  # the model finished before the node was lost: kept
    for path in COMPARED + [f"{cluster_run.model}/model.safetensors"]:
        assert (interrupted.work / path).read_bytes() == (cluster_run.work / path).read_bytes(), path
