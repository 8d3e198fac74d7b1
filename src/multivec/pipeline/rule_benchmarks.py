"""Runtime and peak memory per rule, from the Snakemake ``benchmark:`` files of the DAG's jobs
(``benchmarks/rules/**.tsv``: one row per run with ``s``, ``h:m:s``, ``max_rss`` (MB), ``cpu_time``, ...).

The workflow profile (``profiles/default``, applied to every run, SLURM jobs included) asks for Snakemake's
extended format (``benchmark-extended: true``), whose columns name the job's rule and wildcards
(``rule_name``, ``wildcards``): such a file goes to the rule it names. A file in the plain format (a run with
``--workflow-profile none``, or written before) does not name its rule, so it is attributed to the rule
whose declared ``benchmark:`` pattern it matches, wildcard constraints included (Snakemake writes a rule's
and the global constraints into its patterns: ``{task,pi|rr}``); when several match, the pattern with the
most literal characters wins (``train/nugget_long_{objective}_r{ratio}`` over
``train/nugget_{objective}_r{ratio}``). Files of no rule of the workflow (a rule since removed or renamed)
are left out and returned, so the caller can say how many.

``write_rule_benchmarks`` writes one row per rule (``COLUMNS``) and a figure of total job seconds and peak
RSS per rule, coloured by work. The work is read from the rule's file (``rules/nugget*.smk`` -> NUGGET, ...;
``WORK_BY_RULE`` names the exceptions).
A job's benchmark is its last run: a job that was up to date in this run keeps the one of the run that
built it, and the ``last_written`` column says when each rule's newest file was written.
"""

from __future__ import annotations

import ast
import datetime as dt
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

BENCHMARK_COLUMNS = ("s", "h:m:s", "max_rss")
COLUMNS = ["work", "rule", "rule_file", "jobs", "total_s", "mean_s", "max_s", "slowest_job", "peak_rss_mb",
           "cpu_time_s", "last_written"]
# The work a rule belongs to, from the name of the file that defines it (first prefix that matches).
WORK_BY_RULE_FILE = (
    ("nugget", "NUGGET"),
    ("table2", "NUGGET"),
    ("subencoder", "Sub-sentence encoder"),
    ("distill", "Distillation"),
    ("claims", "Claims"),
    ("statistics", "Claims"),
)
# Rules whose file belongs to no single work but which do (rules/audit.smk also builds NUGGET's Table 1).
WORK_BY_RULE = {"table1_tasks": "NUGGET"}
SHARED_WORK = "shared (data, audit, report)"
WORK_COLOURS = {"NUGGET": "tab:blue", "Sub-sentence encoder": "tab:green", "Distillation": "tab:purple",
                "Claims": "tab:red", SHARED_WORK: "tab:gray"}

# Snakemake's wildcard syntax: {name} or {name,constraint}, the constraint may hold {m,n} quantifiers.
_WILDCARD = re.compile(r"\{\s*(?P<name>\w+)\s*(?:,\s*(?P<constraint>(?:[^{}]+|\{\d+(?:,\d*)?\})+))?\s*\}")


@dataclass(frozen=True)
class DeclaredBenchmark:
    """A rule's ``benchmark:`` pattern (constraints written in, as Snakemake stores it) and its rule file."""

    rule: str
    pattern: str
    rule_file: str

    @property
    def regex(self) -> re.Pattern:
        return pattern_regex(self.pattern)

    @property
    def literal_length(self) -> int:
        return len(_WILDCARD.sub("", self.pattern))

    @property
    def work(self) -> str:
        return WORK_BY_RULE.get(self.rule) or work_of(self.rule_file)


def pattern_regex(pattern: str) -> re.Pattern:
    """A full-match regex of a Snakemake file pattern; a wildcard without a constraint matches ``.+``
    (Snakemake's default) and a repeated wildcard must repeat its first value."""
    parts, last, seen = [], 0, set()
    for match in _WILDCARD.finditer(pattern):
        parts.append(re.escape(pattern[last:match.start()]))
        name = match.group("name")
        if name in seen:
            parts.append(f"(?P={name})")
        else:
            parts.append(f"(?P<{name}>{match.group('constraint') or '.+'})")
            seen.add(name)
        last = match.end()
    parts.append(re.escape(pattern[last:]))
    return re.compile("".join(parts) + r"\Z")


def work_of(rule_file: str) -> str:
    name = Path(rule_file).name
    return next((work for prefix, work in WORK_BY_RULE_FILE if name.startswith(prefix)), SHARED_WORK)


def declared_benchmarks(rules: Iterable[Any], basedir: str | os.PathLike) -> dict[str, dict[str, str]]:
    """``{rule name: {"benchmark": pattern, "rule_file": path relative to basedir}}`` for every rule with a
    ``benchmark:``, from Snakemake's rule objects (``workflow.rules``): what a rule's ``params`` can carry."""
    declared = {}
    for rule in rules:
        benchmark = getattr(rule, "benchmark", None)
        if benchmark:
            snakefile = str(getattr(rule, "snakefile", "") or "")
            relative = os.path.relpath(snakefile, basedir) if snakefile else ""
            declared[rule.name] = {"benchmark": str(benchmark), "rule_file": relative}
    return declared


def as_declared(declared: Mapping[str, Mapping[str, str]]) -> list[DeclaredBenchmark]:
    return [DeclaredBenchmark(rule, spec["benchmark"], spec.get("rule_file", "")) for rule, spec in declared.items()]


def attribute(path: str, declared: Iterable[DeclaredBenchmark]) -> tuple[DeclaredBenchmark, dict[str, str]] | None:
    """The rule whose pattern ``path`` (relative to the working directory) matches, with the wildcards."""
    found = []
    for candidate in declared:
        match = candidate.regex.match(path)
        if match:
            found.append((candidate.literal_length, candidate.rule, candidate, match.groupdict()))
    if not found:
        return None
    found.sort(key=lambda item: (-item[0], item[1]))
    return found[0][2], found[0][3]


def _number(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):  # "NA" / "-": Snakemake collected nothing (a job shorter than its poll)
        return math.nan
    return number


def read_benchmark(path: str | os.PathLike) -> dict[str, Any]:
    """One job's benchmark: mean seconds over its runs (``repeat``), peak ``max_rss`` (MB), mean CPU seconds,
    and in the extended format the rule and wildcards it names (``rule_name``: None in the plain format)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    if not lines or tuple(lines[0].split("\t")[:3]) != BENCHMARK_COLUMNS:
        raise ValueError(f"{path}: not a Snakemake benchmark file (header {lines[0][:60] if lines else ''!r})")
    header = lines[0].split("\t")
    runs = [dict(zip(header, line.split("\t"))) for line in lines[1:] if line.strip()]
    if not runs:
        raise ValueError(f"{path}: a benchmark header without any run")
    seconds = [_number(r.get("s")) for r in runs]
    rss = [v for v in (_number(r.get("max_rss")) for r in runs) if not math.isnan(v)]
    cpu = [v for v in (_number(r.get("cpu_time")) for r in runs) if not math.isnan(v)]
    named = runs[-1].get("rule_name")
    return {"s": sum(seconds) / len(seconds), "max_rss_mb": max(rss) if rss else math.nan,
            "cpu_time_s": sum(cpu) / len(cpu) if cpu else math.nan, "runs": len(runs),
            "rule_name": named or None, "wildcards": _wildcards(runs[-1].get("wildcards"), path) if named else None}


def _wildcards(text: str | None, path: str | os.PathLike) -> dict[str, str]:
    """The extended format's ``wildcards`` column: the repr of the job's wildcards dict."""
    try:
        wildcards = ast.literal_eval(text or "{}")
    except (ValueError, SyntaxError) as error:
        raise ValueError(f"{path}: the wildcards column is not a dict literal ({text[:60]!r}): {error}") from None
    if not isinstance(wildcards, dict):
        raise ValueError(f"{path}: the wildcards column is not a dict literal ({text[:60]!r})")
    return {str(k): str(v) for k, v in wildcards.items()}


def collect(folder: str | os.PathLike, declared: Mapping[str, Mapping[str, str]],
            root: str | os.PathLike = ".") -> tuple[list[dict[str, Any]], list[str]]:
    """(one record per benchmark file attributed to a rule, paths that match no declared pattern)."""
    root = Path(root)
    rules = as_declared(declared)
    by_name = {rule.rule: rule for rule in rules}
    jobs, unmatched = [], []
    for file in sorted(Path(root, folder).rglob("*.tsv")):
        relative = file.relative_to(root).as_posix()
        record = read_benchmark(file)
        named, wildcards = record.pop("rule_name"), record.pop("wildcards")
        if named is not None:  # the extended format names the job's rule: no pattern to match
            found = (by_name[named], wildcards) if named in by_name else None
        else:
            found = attribute(relative, rules)
        if found is None:
            unmatched.append(relative)
            continue
        rule, wildcards = found
        jobs.append({"work": rule.work, "rule": rule.rule, "rule_file": rule.rule_file, "file": relative,
                     "job": ", ".join(f"{k}={v}" for k, v in wildcards.items()) or rule.rule,
                     "written": file.stat().st_mtime, **record})
    return jobs, unmatched


def summarise(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per rule (``COLUMNS``), by work, then by total seconds (largest first)."""
    by_rule: dict[str, list[dict[str, Any]]] = {}
    for job in jobs:
        by_rule.setdefault(job["rule"], []).append(job)
    rows = []
    for rule, group in by_rule.items():
        seconds = [j["s"] for j in group if not math.isnan(j["s"])]
        rss = [j["max_rss_mb"] for j in group if not math.isnan(j["max_rss_mb"])]
        cpu = [j["cpu_time_s"] for j in group if not math.isnan(j["cpu_time_s"])]
        slowest = max(group, key=lambda j: -1.0 if math.isnan(j["s"]) else j["s"])
        rows.append({
            "work": group[0]["work"], "rule": rule, "rule_file": group[0]["rule_file"], "jobs": len(group),
            "total_s": round(sum(seconds), 2), "mean_s": round(sum(seconds) / len(seconds), 2) if seconds else "",
            "max_s": round(max(seconds), 2) if seconds else "", "slowest_job": slowest["job"],
            "peak_rss_mb": round(max(rss), 1) if rss else "", "cpu_time_s": round(sum(cpu), 2) if cpu else "",
            "last_written": dt.datetime.fromtimestamp(max(j["written"] for j in group)).isoformat(timespec="seconds"),
        })
    works = list(WORK_COLOURS)
    rows.sort(key=lambda r: (works.index(r["work"]) if r["work"] in works else len(works), -r["total_s"], r["rule"]))
    return rows


def plot(rows: list[dict[str, Any]], path: str | os.PathLike, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    ordered = list(reversed(rows))  # barh draws bottom-up: the first row on top
    names = [r["rule"] for r in ordered]
    colours = [WORK_COLOURS.get(r["work"], "tab:gray") for r in ordered]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 1.2 + 0.24 * len(rows)), sharey=True)
    left.barh(names, [r["total_s"] for r in ordered], color=colours)
    left.set_xlabel("job-seconds, summed over the rule's jobs")
    right.barh(names, [r["peak_rss_mb"] if r["peak_rss_mb"] != "" else 0 for r in ordered], color=colours)
    right.set_xlabel("peak RSS of the rule's largest job, MB")
    for axis in (left, right):
        axis.tick_params(axis="y", labelsize=7)
        axis.grid(axis="x", alpha=0.3)
    present = [w for w in WORK_COLOURS if any(r["work"] == w for r in rows)]
    right.legend(handles=[Patch(color=WORK_COLOURS[w], label=w) for w in present], fontsize=7, loc="lower right")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_rule_benchmarks(folder: str | os.PathLike, declared: Mapping[str, Mapping[str, str]],
                          csv_path: str | os.PathLike, png_path: str | os.PathLike,
                          root: str | os.PathLike = ".") -> dict[str, Any]:
    """Summarise the benchmark files under ``folder`` into ``csv_path`` and ``png_path``; returns counts and
    the unmatched files. No attributable benchmark at all is an error (nothing ran, or the patterns are wrong)."""
    import csv

    jobs, unmatched = collect(folder, declared, root)
    if not jobs:
        raise ValueError(f"no benchmark file under {Path(root, folder)} matches a rule's benchmark pattern "
                         f"({len(unmatched)} unmatched files): nothing to summarise")
    rows = summarise(jobs)
    Path(csv_path).parent.mkdir(parents=True, exist_ok=True)
    with open(csv_path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    total = sum(r["total_s"] for r in rows)
    plot(rows, png_path, f"{len(jobs)} jobs of {len(rows)} rules, {total:,.0f} job-seconds in all "
                         "(each job's last run, from its benchmark file)")
    return {"jobs": len(jobs), "rules": len(rows), "total_s": total, "unmatched": unmatched}
