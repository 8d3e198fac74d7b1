"""Reading back from the local SLURM (scripts/slurm/start_local_slurm.sh) what a Snakemake run submitted, for
tests/test_slurm_cluster.py and the rehearsal through SLURM (tests/test_rehearsal.py). The cluster itself is
the session fixture ``local_slurm`` (tests/conftest.py)."""

from __future__ import annotations

import re
import subprocess
from datetime import datetime
from pathlib import Path

from multivec.pipeline.slurm_preflight import parse_minutes

ACCOUNT, CPU_PARTITION, GPU_PARTITION = "multivec", "cpu", "gpu"  # what start_local_slurm.sh creates


def slurm_is_up() -> bool:
    try:
        return subprocess.run(["scontrol", "ping"], capture_output=True, text=True, timeout=30).stdout.count("UP") > 0
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return False


def run(command) -> str:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{command}: {done.stderr}"
    return done.stdout


def run_id(output: str) -> str:
    """The run ID the SLURM plugin names every job of one Snakemake run with, from that run's output."""
    found = re.search(r"SLURM run ID: (\S+)", output)
    assert found, output[-3000:]
    return found.group(1)


def sacct(run_id: str, since: datetime) -> list[dict]:
    """SLURM's accounting record of every job of one Snakemake run (its jobs share the run ID as name)."""
    fields = ["JobID", "Comment", "Account", "Partition", "ReqMem", "Timelimit", "AllocCPUS", "State"]
    text = run(["sacct", "-X", "-n", "-P", "--name", run_id, "-S", since.strftime("%Y-%m-%dT%H:%M:%S"),
                f"--format={','.join(fields)}"])
    return [dict(zip(fields, line.split("|"))) for line in text.splitlines() if line.strip()]


GROUP_HEADER = re.compile(r"^.*Group job (\S+) \(jobs in lexicogr\. order\):$", re.MULTILINE)
# The first line of a job's record: "rule <name>:", indented by 4 for a job of a group job (textwrap.indent of
# its record under the group's header; nothing else Snakemake prints looks like it).
RULE_LINE = re.compile(r"^(    )?(local)?rule (\w+):$", re.MULTILINE)
# Where a job's record may end at the latest: the next job's or group's record (its timestamp line or header).
RECORD_START = re.compile(r"^(?:    )?\[\w{3} \w{3} [^]]*\]|^.*Group job \S+ \(jobs in lexicogr\. order\):$|"
                          r"^(?:    )?(?:local)?rule \w+:$", re.MULTILINE)


def _job(local: str, rule: str, block: str, indent: str, group: str | None = None,
         group_job: int | None = None) -> dict:
    """One job from its record's lines after "rule <name>:"; only lines at the record's own indentation count,
    so a line another process wrote among them (a local job's stderr) is ignored."""
    job = {"rule": rule, "local": bool(local), "group": group, "group_job": group_job}

    def field(key):
        found = re.search(rf"^{indent}    {key}: (.*)$", block, re.MULTILINE)
        return found.group(1) if found else None

    for key in ("input", "output", "log"):
        value = field(key)
        job[key] = value.split(", ") if value else []
    resources, threads = field("resources"), field("threads")
    job["resources"] = dict(item.split("=", 1) for item in resources.split(", ")) if resources else {}
    job["resources"]["threads"] = int(threads) if threads else 1
    return job


def jobs_of_run(output: str) -> list[dict]:
    """Each job a Snakemake run printed: rule, whether local, input, output and log files, resources (threads
    included) as Snakemake resolved them from the profile and the config; first the jobs outside any group,
    then those of group jobs. A job of a group job (``--groups``) is printed indented under its group's
    header; it carries the group's name in ``group`` and, in ``group_job``, a number shared by the jobs of one
    group job (several group jobs can have one name).

    Snakemake prints each job as a separate record, and in a real run other lines fall between them (the
    executor's "Finished jobid" and progress records, a dry run's "Shell command", the stderr of local jobs,
    which share the log): so a group's job belongs to the last group header above it, wherever that is, and
    a job's record ends at the next record, not at its first foreign line."""
    headers = list(GROUP_HEADER.finditer(output))
    plain, grouped = [], []
    for line in RULE_LINE.finditer(output):
        indent, local, rule = line.group(1) or "", line.group(2), line.group(3)
        following = RECORD_START.search(output, line.end())
        block = output[line.end():following.start() if following else len(output)]
        if not indent:
            plain.append(_job(local, rule, block, indent))
            continue
        above = [number for number, header in enumerate(headers) if header.end() <= line.start()]
        assert above, f"a group's job printed before any group header: {output[line.start():line.start() + 300]}"
        grouped.append(_job(local, rule, block, indent, group=headers[above[-1]].group(1), group_job=above[-1]))
    return plain + grouped


def declared_localrules(repo: Path) -> set[str]:
    """Every rule named in a ``localrules:`` block of the workflow (Snakefile and rules/*.smk): the jobs a
    cluster run keeps on the submitting host."""
    names = set()
    for path in [repo / "Snakefile", *sorted((repo / "rules").glob("*.smk"))]:
        for block in re.findall(r"^localrules:\n((?:[ \t]+\w+,?[ \t]*\n)+)", path.read_text(encoding="utf-8"),
                                re.MULTILINE):
            names.update(re.findall(r"\w+", block))
    return names


def submitted(planned: list[dict]) -> list[dict]:
    return [job for job in planned if not job["local"]]


def slurm_jobs(planned: list[dict]) -> list[dict]:
    """What Snakemake submitted to SLURM, one entry per SLURM job: a job outside any group as it is; a group job
    as ``{"rule": "<group>_<its rules, sorted, as the plugin names it>", "resources": ...}`` with the resources
    Snakemake asks for it when its jobs run one after another (the rehearsal's ``--cores 1``): the largest
    memory and CPUs of its jobs, and the sum of their time limits (Snakemake's ``GroupResources.basic_layered``
    with one job per layer)."""
    asked = [job for job in submitted(planned) if job["group"] is None]
    groups: dict[int, list[dict]] = {}
    for job in submitted(planned):
        if job["group"] is not None:
            groups.setdefault(job["group_job"], []).append(job)
    for members in groups.values():
        first = members[0]["resources"]
        for key in ("slurm_account", "slurm_partition"):
            assert all(m["resources"][key] == first[key] for m in members), (key, members)
        rules = sorted({m["rule"] for m in members})
        named = rules[:5] + (["..."] if len(rules) > 5 else [])  # the plugin's GroupJob.name
        asked.append({"rule": f"{members[0]['group']}_{'_'.join(named)}",
                      "resources": {"slurm_account": first["slurm_account"],
                                    "slurm_partition": first["slurm_partition"],
                                    "mem_mb": max(int(m["resources"]["mem_mb"]) for m in members),
                                    "runtime": sum(int(m["resources"]["runtime"]) for m in members),
                                    "threads": max(m["resources"]["threads"] for m in members)}})
    return asked


def rule_of(comment: str, rules) -> str:
    """The rule of a job from the comment the plugin gives it: rule_<rule>[_wildcards_<values>] (a group job:
    rule_<group>_<its rules>, which ``slurm_jobs`` names as its rule)."""
    matches = [r for r in rules if comment == f"rule_{r}" or comment.startswith(f"rule_{r}_wildcards_")]
    assert len(matches) == 1, (comment, sorted(rules))
    return matches[0]


def mismatched_jobs(planned: list[dict], jobs: list[dict]) -> list[str]:
    """Where SLURM's records of a run (``sacct``) differ from what Snakemake asked for (``jobs_of_run``): per
    rule (or group job name), the multiset of (state, account, partition, memory, time limit, CPUs) that SLURM
    granted must be the multiset Snakemake resolved from the profile and the config for that rule's jobs; every
    job COMPLETED."""
    asked_jobs = slurm_jobs(planned)
    rules = {job["rule"] for job in asked_jobs}
    problems = []
    for rule in sorted(rules):
        asked = sorted(("COMPLETED", j["resources"]["slurm_account"], j["resources"]["slurm_partition"],
                        f"{j['resources']['mem_mb']}M", int(j["resources"]["runtime"]), j["resources"]["threads"])
                       for j in asked_jobs if j["rule"] == rule)
        seen = sorted((j["State"], j["Account"], j["Partition"], j["ReqMem"], parse_minutes(j["Timelimit"]),
                       int(j["AllocCPUS"])) for j in jobs if rule_of(j["Comment"], rules) == rule)
        if asked != seen:
            problems.append(f"{rule}: asked {asked}, SLURM ran {seen}")
    return problems
