"""Pre-flight check of a SLURM run: before Snakemake runs or submits any job, every job it is
about to submit is checked against the cluster itself, so a wrong account or partition, or a request no
node can grant, stops the run at once with one message listing every problem, instead of failing (or
waiting forever) in the queue hours later.

The Snakefile's ``onstart`` calls ``check_workflow(workflow)``; it does nothing unless the executor is
``slurm`` (``--profile profiles/slurm``). Snakemake runs ``onstart`` after building the DAG and before
the first job, local ones (downloads) included; never in a dry run, nor inside a job (jobs run with
``--no-hooks``, which is also how a user skips this check).

For every job that is not a local rule it takes what the SLURM executor plugin (2.8) submits: the
``slurm_account`` and ``slurm_partition`` resources (``-A``, ``-p``; without a partition the cluster's
default partition), ``cpus_per_task`` or the threads (``--cpus-per-task``), ``mem_mb`` or
``mem_mb_per_cpu`` (``--mem``/``--mem-per-cpu``), ``runtime`` in minutes (``-t``), and GPUs: ``gpu``
(``--gpus=N``) or a ``gres`` such as ``gpu:2`` (``--gres``). The cluster is read from ``scontrol show
partition``/``show node`` and the user's associations (``sacctmgr list association``). A problem is:

- a partition the cluster does not have, or one that is not UP (its jobs would only wait);
- an account the user has no association with, an account the association or the partition's
  ``AllowAccounts``/``DenyAccounts`` keeps off that partition;
- more CPUs or memory (``mem_mb``; ``MaxMemPerNode``) than any node of the partition has: sbatch would
  refuse it as "Requested node configuration is not available";
- a runtime above the partition's ``MaxTime``: sbatch accepts the job, and it waits forever
  (``PartitionTimeLimit``);
- GPUs on a partition whose nodes have fewer (none): sbatch refuses with the same unhelpful message;
- more than one GPU for a job: every rule runs one process (no torchrun), so the other GPUs would sit idle
  and the batch a training step sees would stay ``train.batch_size`` x ``train.grad_accumulation``, not grow
  with them (a profile raising ``gpu`` to reach the paper's batch would train the configured one, silently).

Each problem names the value, where it was set (``default-resources``, ``set-resources <rule>``, or the
rule's ``resources:``, which take the config's ``resources`` block), the rules and the number of jobs.
``tests/test_slurm_cluster.py`` checks each kind against a real SLURM (scripts/slurm/start_local_slurm.sh).
"""

from __future__ import annotations

import getpass
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

# Written before every problem list; tests and users look for it.
HEADER = "SLURM pre-flight check (multivec.pipeline.slurm_preflight): nothing was run or submitted"
ADVICE = ("Point the SLURM profile at this cluster: slurm_account and slurm_partition in the profile's "
          "default-resources and set-resources (scripts/slurm/site_profile.py writes a copy of profiles/slurm "
          "with your account and partitions). To submit anyway, skipping this check: --no-hooks.")

Runner = Callable[[Sequence[str]], str]


class PreflightError(RuntimeError):
    """The jobs of a SLURM run do not fit the cluster; the message lists every problem."""


@dataclass(frozen=True)
class Request:
    """What one job asks SLURM for, as the executor plugin writes its sbatch call."""

    rule: str
    account: str | None
    partition: str | None
    cpus: int
    mem_mb: int | None
    runtime_min: int | None
    gpus: int
    origins: Mapping[str, str] = field(default_factory=dict)  # resource name -> where it was set


@dataclass(frozen=True)
class Partition:
    name: str
    default: bool
    state: str
    max_time_min: int | None  # None: UNLIMITED
    allow_accounts: frozenset[str] | None  # None: ALL
    deny_accounts: frozenset[str]
    nodes: tuple[str, ...]
    max_mem_per_node_mb: int | None  # None: UNLIMITED


@dataclass(frozen=True)
class Node:
    name: str
    cpus: int
    memory_mb: int
    gpus: int


@dataclass(frozen=True)
class Cluster:
    partitions: Mapping[str, Partition]
    nodes: Mapping[str, Node]
    user: str
    # account -> partitions its association with the user is limited to (None: any partition)
    associations: Mapping[str, frozenset[str] | None]
    association_error: str | None = None  # sacctmgr failed: accounts cannot be checked


# -- reading the cluster ----------------------------------------------------------------------------------

def _run(command: Sequence[str]) -> str:
    """stdout of a SLURM command; RuntimeError with its stderr if it fails or is missing."""
    if shutil.which(command[0]) is None:
        raise RuntimeError(f"`{command[0]}` is not on PATH: SLURM's commands are needed on the machine that runs "
                           "Snakemake (a login node of the cluster)")
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"`{' '.join(command)}` did not answer within 60 s (is slurmctld reachable?)") from None
    if done.returncode != 0:
        raise RuntimeError(f"`{' '.join(command)}` failed (exit {done.returncode}): {done.stderr.strip()}")
    return done.stdout


_PAIR = re.compile(r"(\w+)=(.*?)(?=\s+\w+=|\s*$)")


def parse_records(text: str) -> list[dict[str, str]]:
    """``scontrol show ... -o`` output: one record per line of ``Key=Value`` pairs (values may hold spaces)."""
    return [dict(_PAIR.findall(line.strip())) for line in text.splitlines() if "=" in line]


def parse_minutes(value: str) -> int | None:
    """A SLURM time limit (``UNLIMITED``, ``7-00:00:00``, ``1:30:00``, ``45:00``, ``90``) in minutes; None: none."""
    value = value.strip()
    if value.upper() in {"UNLIMITED", "INFINITE", "NONE"}:
        return None
    match = re.fullmatch(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?", value)
    if not match:
        raise ValueError(f"unreadable SLURM time limit {value!r}")
    days, first, second, third = match.groups()
    if days is not None:  # D-HH[:MM[:SS]]
        hours, minutes, seconds = int(first), int(second or 0), int(third or 0)
    elif third is not None:  # HH:MM:SS
        hours, minutes, seconds = int(first), int(second), int(third)
    elif second is not None:  # MM:SS
        hours, minutes, seconds = 0, int(first), int(second)
    else:  # MM
        hours, minutes, seconds = 0, int(first), 0
    return int(days or 0) * 1440 + hours * 60 + minutes + (1 if seconds else 0)


def parse_gpus(gres: str) -> int:
    """GPUs in a node's ``Gres`` (``(null)``, ``gpu:4``, ``gpu:a100:2(S:0-1),gpu:v100:1``); a bare ``gpu``: 1."""
    total = 0
    for item in re.sub(r"\([^)]*\)", "", gres).split(","):
        parts = item.strip().split(":")
        if parts[0] != "gpu":
            continue
        total += int(parts[-1]) if len(parts) > 1 and parts[-1].isdigit() else 1
    return total


def _accounts(value: str | None) -> frozenset[str] | None:
    if value is None or value.strip().upper() in {"", "ALL", "(NULL)"}:
        return None
    return frozenset(a.strip().lower() for a in value.split(",") if a.strip())


def _memory_mb(value: str | None) -> int | None:
    if value is None or value.strip().upper() in {"UNLIMITED", "0", ""}:
        return None
    return int(re.match(r"\d+", value).group())


def read_cluster(run: Runner = _run, user: str | None = None) -> Cluster:
    """Partitions, nodes and the user's account associations, from ``scontrol`` and ``sacctmgr``."""
    user = user or getpass.getuser()
    partitions = {}
    for rec in parse_records(run(["scontrol", "show", "partition", "-o"])):
        partitions[rec["PartitionName"]] = Partition(
            name=rec["PartitionName"], default=rec.get("Default") == "YES", state=rec.get("State", "UP"),
            max_time_min=parse_minutes(rec.get("MaxTime", "UNLIMITED")),
            allow_accounts=_accounts(rec.get("AllowAccounts")),
            deny_accounts=_accounts(rec.get("DenyAccounts")) or frozenset(),
            nodes=tuple(_expand_nodes(rec.get("Nodes", ""), run)),
            max_mem_per_node_mb=_memory_mb(rec.get("MaxMemPerNode")))
    nodes = {}
    for rec in parse_records(run(["scontrol", "show", "node", "-o"])):
        nodes[rec["NodeName"]] = Node(name=rec["NodeName"], cpus=int(rec.get("CPUTot", 0)),
                                      memory_mb=_memory_mb(rec.get("RealMemory")) or 0,
                                      gpus=parse_gpus(rec.get("Gres", "(null)")))
    associations: dict[str, frozenset[str] | None] = {}
    error = None
    try:
        text = run(["sacctmgr", "-n", "-P", "list", "association", f"user={user}", "format=account,partition"])
    except RuntimeError as err:
        error = str(err)
    else:
        for line in text.splitlines():
            if not line.strip():
                continue
            account, _, partition = line.partition("|")
            account, partition = account.strip().lower(), partition.strip()
            if not partition:
                associations[account] = None  # any partition
            elif associations.get(account, frozenset()) is not None:
                associations[account] = associations.get(account, frozenset()) | {partition}
    return Cluster(partitions=partitions, nodes=nodes, user=user, associations=associations,
                   association_error=error)


def _expand_nodes(expression: str, run: Runner) -> list[str]:
    """Node names of a hostlist (``node[01-04],gpu1``); ``scontrol show hostnames`` expands it."""
    if not expression or expression == "(null)":
        return []
    if "[" not in expression:
        return expression.split(",")
    return run(["scontrol", "show", "hostnames", expression]).split()


# -- the checks -------------------------------------------------------------------------------------------

def problems(requests: Iterable[Request], cluster: Cluster) -> list[str]:
    """Every way the requests do not fit the cluster; one line per problem, naming rules, job counts and
    where the offending value was set."""
    found: dict[str, list[tuple[Request, str | None]]] = defaultdict(list)
    default = next((p.name for p in cluster.partitions.values() if p.default), None)
    for req in requests:
        for problem, key in _request_problems(req, cluster, default):
            found[problem].append((req, key))
    lines = []
    for problem, hits in found.items():
        rules = sorted({req.rule for req, _ in hits})
        jobs = (f"{len(hits)} job{'s' if len(hits) != 1 else ''} of rule{'s' if len(rules) != 1 else ''} "
                f"{', '.join(rules)}")
        lines.append(f"{problem}: {jobs}{_origins([req.origins.get(key) for req, key in hits if key])}")
    if cluster.association_error:
        lines.append(f"the accounts of user {cluster.user} cannot be read, so neither this check nor the executor "
                     f"plugin can validate slurm_account: {cluster.association_error}")
    return lines


def _origins(origins: list[str | None]) -> str:
    """' (set by default-resources; set-resources of rules a, b)' for the places the values came from."""
    named = sorted({o for o in origins if o})
    if not named:
        return ""
    set_resources = [o.split(" ", 1)[1] for o in named if o.startswith("set-resources ")]
    others = [o for o in named if not o.startswith("set-resources ")]
    if set_resources:
        others.append(f"set-resources of rule{'s' if len(set_resources) != 1 else ''} {', '.join(set_resources)}")
    return f" (set by {'; '.join(others)})"


def _request_problems(req: Request, cluster: Cluster, default_partition: str | None) -> list[tuple[str, str | None]]:
    """(problem, the resource it is about) of one job."""
    out: list[tuple[str, str | None]] = []
    if req.gpus > 1:
        out.append((f"{req.gpus} GPUs requested, but every rule runs one process on one GPU (no torchrun): "
                    f"{req.gpus - 1} would sit idle, and a training step would still see train.batch_size x "
                    "train.grad_accumulation documents (the paper's batch is reached by accumulation on one GPU; "
                    "docs/paper_settings.md); ask for gpu=1", "gpu"))
    if req.account is not None and cluster.associations:  # none listed (or unreadable): SLURM decides, as the plugin
        account = req.account.lower()
        if account not in cluster.associations:
            out.append((f"account {req.account!r} is not an account of user {cluster.user} (sacctmgr associations: "
                        f"{', '.join(sorted(cluster.associations)) or 'none'})", "slurm_account"))
    name = req.partition or default_partition
    if name is None:
        return out + [("no slurm_partition given and the cluster has no default partition", None)]
    partition = cluster.partitions.get(name)
    if partition is None:
        return out + [(f"partition {name!r} does not exist on this cluster (its partitions: "
                       f"{', '.join(sorted(cluster.partitions)) or 'none'})", "slurm_partition")]
    if partition.state.upper() != "UP":
        out.append((f"partition {name!r} is {partition.state}: its jobs would wait until it is UP", "slurm_partition"))
    if req.account is not None:
        account = req.account.lower()
        allowed = cluster.associations.get(account)
        if allowed is not None and name not in allowed:
            out.append((f"account {req.account!r} may not use partition {name!r}: user {cluster.user}'s association "
                        f"with it covers only {', '.join(sorted(allowed))}", "slurm_account"))
        if (partition.allow_accounts is not None and account not in partition.allow_accounts) \
                or account in partition.deny_accounts:
            out.append((f"partition {name!r} does not accept account {req.account!r} (AllowAccounts="
                        f"{','.join(sorted(partition.allow_accounts or [])) or 'ALL'}, DenyAccounts="
                        f"{','.join(sorted(partition.deny_accounts)) or 'none'})", "slurm_account"))
    nodes = [cluster.nodes[n] for n in partition.nodes if n in cluster.nodes]
    if not nodes:
        return out + [(f"partition {name!r} has no nodes", "slurm_partition")]
    most_cpus = max(n.cpus for n in nodes)
    if req.cpus > most_cpus:
        out.append((f"{req.cpus} CPUs per task exceed the largest node of partition {name!r} ({most_cpus} CPUs)",
                    "threads"))
    if req.mem_mb is not None:
        most_mem = max(n.memory_mb for n in nodes)
        limit = min(most_mem, partition.max_mem_per_node_mb or most_mem)
        if req.mem_mb > limit:
            cap = "" if partition.max_mem_per_node_mb is None else f", MaxMemPerNode {partition.max_mem_per_node_mb} MB"
            out.append((f"mem_mb={req.mem_mb} exceeds what partition {name!r} grants a job ({limit} MB: largest node "
                        f"{most_mem} MB{cap}); sbatch would refuse it", "mem_mb"))
    if req.runtime_min is not None and partition.max_time_min is not None and req.runtime_min > partition.max_time_min:
        out.append((f"runtime={req.runtime_min} min exceeds the MaxTime of partition {name!r} "
                    f"({partition.max_time_min} min): SLURM would accept the job and never start it", "runtime"))
    if req.gpus:
        most_gpus = max(n.gpus for n in nodes)
        if req.gpus > most_gpus:
            have = "has no GPU" if most_gpus == 0 else f"has at most {most_gpus} GPUs per node"
            out.append((f"{req.gpus} GPU{'s' if req.gpus != 1 else ''} requested on partition {name!r}, which {have}; "
                        "sbatch would refuse the job (\"Requested node configuration is not available\")", "gpu"))
    return out


# -- Snakemake --------------------------------------------------------------------------------------------

def _int(value) -> int | None:
    """A resource value as an int; None when unset or not yet known (a TBD placeholder)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def request_of_job(job, overwrite_resources: Mapping[str, Mapping] | None = None) -> Request:
    """What the SLURM executor plugin (2.8, submit_string.py) submits for a Snakemake job."""
    res = job.resources
    rule = job.rule.name
    overridden = (overwrite_resources or {}).get(rule, {})
    declared = set(getattr(job.rule, "resources", {}) or {})

    def origin(key: str) -> str:
        if key in overridden:
            return f"set-resources {rule}"
        if key in declared and key not in {"slurm_account", "slurm_partition"}:
            return f"rule {rule}'s resources"
        return "default-resources"

    cpus = _int(res.get("cpus_per_task")) or _int(job.threads) or 1
    mem = _int(res.get("mem_mb"))
    if _int(res.get("mem_mb_per_cpu")):
        mem = _int(res.get("mem_mb_per_cpu")) * cpus
    gpus = _int(res.get("gpu")) or 0
    gres = str(res.get("gres") or "")
    if not gpus and gres.startswith("gpu"):
        gpus = parse_gpus(gres)
    account = res.get("slurm_account")
    partition = res.get("slurm_partition")
    keys = ["slurm_account", "slurm_partition", "mem_mb", "runtime", "gpu"]
    origins = {k: origin(k) for k in keys}
    origins["threads"] = f"rule {rule}'s threads"
    return Request(rule=rule, account=None if account in (None, "") else str(account),
                   partition=None if partition in (None, "") else str(partition), cpus=cpus, mem_mb=mem,
                   runtime_min=_int(res.get("runtime")), gpus=gpus, origins=origins)


def check_requests(requests: Sequence[Request], run: Runner = _run, user: str | None = None) -> str:
    """Raises ``PreflightError`` listing every problem of ``requests`` on the cluster; returns a summary line."""
    try:
        cluster = read_cluster(run, user)
    except RuntimeError as err:
        raise PreflightError(f"{HEADER}.\n  - cannot read the cluster: {err}\n{ADVICE}") from None
    found = problems(requests, cluster)
    if found:
        raise PreflightError(f"{HEADER}; {len(found)} problem{'s' if len(found) != 1 else ''}:\n"
                             + "".join(f"  - {line}\n" for line in found) + ADVICE)
    partitions = sorted({r.partition or "(default)" for r in requests})
    accounts = sorted({r.account or "(default)" for r in requests})
    unchecked = "" if cluster.associations else (f"; accounts not checked: sacctmgr lists no association of user "
                                                 f"{cluster.user}")
    return (f"SLURM pre-flight check: {len(requests)} jobs fit the cluster (accounts {', '.join(accounts)}; "
            f"partitions {', '.join(partitions)}; CPUs, memory, time and GPUs within their nodes and limits{unchecked})")


def check_workflow(workflow) -> None:
    """The Snakefile's ``onstart``: for a SLURM run, checks every job to be submitted; stops the run with
    ``PreflightError`` listing every problem. Any other executor: nothing."""
    plugin = getattr(workflow, "executor_plugin", None)
    if plugin is None or plugin.name != "slurm":
        return
    overwrite = {rule: dict(values) for rule, values in workflow.resource_settings.overwrite_resources.items()}
    requests = [request_of_job(job, overwrite) for job in workflow.dag.needrun_jobs() if not job.is_local]
    if not requests:
        return
    print(check_requests(requests), file=sys.stderr)
