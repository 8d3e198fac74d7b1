"""`snakemake --report`: every table and figure of the DAG is in it, with a caption and its work's category, and
the per-rule runtime and memory table (rules/rule_benchmarks.smk, multivec.pipeline) summarises the DAG's
benchmark files. The end-to-end check builds `all` at smoke scale; the rest checks the pieces."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from multivec.pipeline.report_contents import read_report
from multivec.pipeline.rule_benchmarks import (COLUMNS, SHARED_WORK, attribute, as_declared, declared_benchmarks,
                                               pattern_regex, read_benchmark, write_rule_benchmarks)

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
# One category per work, the data audit shared by the works, the claims page, and the runtime table.
CATEGORIES = {"NUGGET", "Sub-sentence encoder", "Distillation", "Representations", "Data", "Claims",
              "Runtime and memory"}
TABLE_OR_FIGURE = (".csv", ".tsv", ".md", ".png", ".svg", ".pdf", ".html")
HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def snakemake(*args, cwd=REPO, timeout=600):
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    return subprocess.run([SNAKEMAKE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def dag_outputs(summary: str) -> dict[str, str]:
    """{output file: rule} from `snakemake --summary` (tab-separated, one line per output of the DAG)."""
    lines = [line.split("\t") for line in summary.splitlines()]
    header = next(i for i, cells in enumerate(lines) if cells[:3] == ["output_file", "date", "rule"])
    return {cells[0]: cells[2] for cells in lines[header + 1:] if len(cells) >= 3}


def is_table_or_figure(path: str) -> bool:
    """A table (results/*.csv, .tsv, .md) or figure (results/*.png, .svg, .pdf, .html) of the results folder."""
    parts = Path(path).parts
    return len(parts) == 2 and parts[0] == "results" and path.endswith(TABLE_OR_FIGURE)


@pytest.mark.e2e
def test_report_holds_every_table_and_figure_of_the_dag(smoke_all):
    work = smoke_all  # `all` at smoke scale (conftest: Table 2 from nothing, then `all` on top)
    config = ("--configfile", "config/smoke.yaml")
    made = snakemake(*config, "--report", "report.zip", cwd=work)
    assert made.returncode == 0, made.stdout[-5000:] + made.stderr[-5000:]
    summary = snakemake(*config, "--summary", "all", cwd=work)
    assert summary.returncode == 0, summary.stderr[-3000:]
    outputs = dag_outputs(summary.stdout)
    report = read_report(work / "report.zip")

    # Every table and figure the DAG builds is flagged with report(), so it is in the report ...
    wanted = {path for path in outputs if is_table_or_figure(path)}
    assert "results/table2.csv" in wanted and "results/rule_benchmarks.png" in wanted
    unflagged = sorted(wanted - set(report.results))
    assert not unflagged, f"tables/figures of the DAG not flagged with report(...): {unflagged}"
    # ... and everything in the report is an output of the DAG, embedded whole, captioned, in a known category.
    assert set(report.results) <= set(outputs), sorted(set(report.results) - set(outputs))
    for path, entry in report.results.items():
        assert report.category_of(path) in CATEGORIES, (path, report.category_of(path))
        assert entry["caption"].strip(), f"{path}: empty caption"
        assert report.embedded_size(path) == (work / path).stat().st_size, path
    assert {"NUGGET", "Sub-sentence encoder", "Distillation", "Runtime and memory"} <= set(report.categories)
    assert "reproduced from raw data to tables" in report.html and "smoke" in report.html  # workflow.rst

    # The runtime table summarises the benchmark file of every other job of this (fresh) run.
    table = pd.read_csv(work / "results/rule_benchmarks.csv")
    assert list(table.columns) == COLUMNS
    benchmark_files = list((work / "benchmarks/rules").rglob("*.tsv"))
    assert table["jobs"].sum() == len(benchmark_files) - 1  # its own is written after it ran
    dag_rules = set(outputs.values()) - {"rule_benchmarks"}
    without_benchmark = sorted(dag_rules - set(table["rule"]))
    assert not without_benchmark, f"rules of the DAG that declare no benchmark: file: {without_benchmark}"
    assert set(table["rule"]) <= dag_rules, sorted(set(table["rule"]) - dag_rules)
    assert (table["total_s"] >= 0).all() and set(table["work"]) >= {"NUGGET", "Distillation", SHARED_WORK}


def flagged_patterns(tmp_path, configfiles) -> list[dict]:
    """The report(...) flags of the parsed workflow (multivec.pipeline.report_flags, its own process)."""
    out = tmp_path / "flags.json"
    result = subprocess.run([sys.executable, "-m", "multivec.pipeline.report_flags", "--snakefile",
                             str(REPO / "Snakefile"), "--directory", str(tmp_path / "w"), "--out", str(out),
                             *(["--configfile", *configfiles] if configfiles else [])],
                            cwd=REPO, env=dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO / "src")),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.mark.parametrize("scale", ["demo", "smoke", "paper"])
def test_every_table_and_figure_the_dag_would_build_is_flagged(scale, mirror, tmp_path):
    """Without building: the DAG's outputs (`snakemake --summary`) against the rules' report(...) flags, so a new
    table that forgets report() fails here in seconds, at every scale (paper-only tables included)."""
    configfiles = [] if scale == "demo" else [str(REPO / "config" / f"{scale}.yaml")]
    summary = snakemake("--summary", "--directory", str(tmp_path / "w"), "all",
                        *(["--configfile", *configfiles] if configfiles else []))
    assert summary.returncode == 0, summary.stderr[-3000:]
    outputs = dag_outputs(summary.stdout)
    flags = flagged_patterns(tmp_path, configfiles)
    by_rule: dict[str, list] = {}
    for flag in flags:
        by_rule.setdefault(flag["rule"], []).append(pattern_regex(flag["pattern"]))
        assert flag["category"] in CATEGORIES, flag
        assert flag["caption"] and Path(flag["caption"]).is_file(), flag
    wanted = {path: rule for path, rule in outputs.items() if is_table_or_figure(path)}
    assert "results/table2.csv" in wanted and "results/rule_benchmarks.csv" in wanted
    unflagged = sorted(path for path, rule in wanted.items()
                       if not any(regex.match(path) for regex in by_rule.get(rule, [])))
    assert not unflagged, f"{scale}: tables/figures of the DAG not flagged with report(...): {unflagged}"


def test_rule_benchmarks_runs_after_every_other_target_of_all(mirror, tmp_path):
    """Its input is every other target of `all`, so a dry run of it schedules the whole DAG."""
    def jobs(target):
        result = snakemake("-n", "--configfile", "config/smoke.yaml", "--directory", str(tmp_path), target)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        counts = {}
        for line in result.stdout.split("Job stats:")[1].splitlines()[3:]:  # after the header and the rule
            cells = line.split()
            if not cells or cells[0] == "total":
                break
            counts[cells[0]] = int(cells[1])
        return counts

    everything, summary = jobs("all"), jobs("results/rule_benchmarks.csv")
    assert summary.pop("rule_benchmarks") == 1 and everything.pop("rule_benchmarks") == 1
    assert everything.pop("all") == 1 and summary == everything


def test_patterns_carry_snakemakes_wildcard_constraints():
    assert pattern_regex("benchmarks/rules/tasks/{task,pi|rr}.tsv").match("benchmarks/rules/tasks/pi.tsv")
    assert not pattern_regex("benchmarks/rules/tasks/{task,pi|rr}.tsv").match("benchmarks/rules/tasks/lee.tsv")
    assert pattern_regex("b/{x,[0-9]{2,3}}_{y}.tsv").match("b/123_a/b.tsv").groupdict() == {"x": "123", "y": "a/b"}
    assert pattern_regex("b/{x}/{x}.tsv").match("b/a/a.tsv") and not pattern_regex("b/{x}/{x}.tsv").match("b/a/c.tsv")
    assert pattern_regex("b/{x}.tsv").match("b/y.tsv.bak") is None  # whole path only


def test_a_file_goes_to_the_most_specific_rule():
    declared = as_declared({
        "train_nugget": {"benchmark": "benchmarks/rules/train/nugget_{objective}_r{ratio}.tsv",
                         "rule_file": "rules/nugget.smk"},
        "train_nugget_long": {"benchmark": "benchmarks/rules/train/nugget_long_{objective}_r{ratio}.tsv",
                              "rule_file": "rules/nugget_long.smk"},
        "subencoder_model_train": {"benchmark": "benchmarks/rules/subencoder/train_{backbone}_{dim}.tsv",
                                   "rule_file": "rules/subencoder.smk"},
    })
    rule, wildcards = attribute("benchmarks/rules/train/nugget_long_ae_r0.1.tsv", declared)
    assert rule.rule == "train_nugget_long" and wildcards == {"objective": "ae", "ratio": "0.1"}
    assert attribute("benchmarks/rules/train/nugget_mt_r0.25.tsv", declared)[0].rule == "train_nugget"
    assert attribute("benchmarks/rules/subencoder/train_minilm_full.tsv", declared)[0].work == "Sub-sentence encoder"
    assert attribute("benchmarks/rules/gone/old.tsv", declared) is None
    table1 = as_declared({"table1_tasks": {"benchmark": "benchmarks/rules/table1_tasks.tsv",
                                           "rule_file": "rules/audit.smk"},
                          "overlap_audit": {"benchmark": "benchmarks/rules/audit/overlap.tsv",
                                            "rule_file": "rules/audit.smk"}})
    assert [d.work for d in table1] == ["NUGGET", SHARED_WORK]  # NUGGET's Table 1 lives beside the audit


def test_declared_benchmarks_read_snakemakes_rules(tmp_path):
    class Rule:  # what workflow.rules holds, as far as declared_benchmarks reads it
        def __init__(self, name, benchmark, snakefile):
            self.name, self.benchmark, self.snakefile = name, benchmark, snakefile

    rules = [Rule("pi_task", "benchmarks/rules/tasks/pi.tsv", str(tmp_path / "rules/table2.smk")),
             Rule("all", None, str(tmp_path / "Snakefile"))]
    assert declared_benchmarks(rules, tmp_path) == {
        "pi_task": {"benchmark": "benchmarks/rules/tasks/pi.tsv", "rule_file": "rules/table2.smk"}}


def test_summary_per_rule_from_benchmark_files(tmp_path):
    folder = tmp_path / "benchmarks/rules"
    (folder / "encode/row_a").mkdir(parents=True)
    (folder / "encode/row_b").mkdir(parents=True)
    (folder / "encode/row_a/pi.tsv").write_text(HEADER + "10.00\t0:00:10\t100.5\t1\t1\t1\t0\t0\t90\t9.5\n")
    (folder / "encode/row_b/pi.tsv").write_text(HEADER + "30.00\t0:00:30\t300.0\t1\t1\t1\t0\t0\t90\t29\n"
                                                + "20.00\t0:00:20\t200.0\t1\t1\t1\t0\t0\t90\t19\n")  # repeat(2)
    (folder / "tasks").mkdir()
    (folder / "tasks/pi.tsv").write_text(HEADER + "0.50\t0:00:00\tNA\tNA\tNA\tNA\tNA\tNA\tNA\t0\n")  # too short
    (folder / "old_rule.tsv").write_text(HEADER + "1.00\t0:00:01\t1\t1\t1\t1\t0\t0\t1\t1\n")
    declared = {"encode_task": {"benchmark": "benchmarks/rules/encode/{encoder}/{task,pi|rr}.tsv",
                                "rule_file": "rules/table2.smk"},
                "pi_task": {"benchmark": "benchmarks/rules/tasks/pi.tsv", "rule_file": "rules/table2.smk"},
                "download": {"benchmark": "benchmarks/rules/download/{source}/{file}.tsv", "rule_file": "rules/data.smk"}}
    assert read_benchmark(folder / "encode/row_b/pi.tsv") == {"s": 25.0, "max_rss_mb": 300.0, "cpu_time_s": 24.0,
                                                              "runs": 2, "rule_name": None, "wildcards": None}
    summary = write_rule_benchmarks("benchmarks/rules", declared, tmp_path / "out.csv", tmp_path / "out.png",
                                    root=tmp_path)
    assert summary["jobs"] == 3 and summary["rules"] == 2 and summary["unmatched"] == ["benchmarks/rules/old_rule.tsv"]
    table = pd.read_csv(tmp_path / "out.csv")
    assert list(table.columns) == COLUMNS and list(table["rule"]) == ["encode_task", "pi_task"]
    table = table.set_index("rule")
    encode = table.loc["encode_task"]
    assert (encode["work"], encode["jobs"], encode["total_s"], encode["max_s"]) == ("NUGGET", 2, 35.0, 25.0)
    assert encode["slowest_job"] == "encoder=row_b, task=pi" and encode["peak_rss_mb"] == 300.0
    assert pd.isna(table.loc["pi_task", "peak_rss_mb"]) and table.loc["pi_task", "total_s"] == 0.5
    assert (tmp_path / "out.png").stat().st_size > 0

    (folder / "tasks/pi.tsv").write_text("not a benchmark\n")
    with pytest.raises(ValueError, match="not a Snakemake benchmark file"):
        write_rule_benchmarks("benchmarks/rules", declared, tmp_path / "out.csv", tmp_path / "out.png", root=tmp_path)
    (folder / "tasks/pi.tsv").write_text(HEADER + "0.50\t0:00:00\tNA\tNA\tNA\tNA\tNA\tNA\tNA\t0\n")
    with pytest.raises(ValueError, match="nothing to summarise"):
        write_rule_benchmarks("benchmarks/rules", {}, tmp_path / "x.csv", tmp_path / "x.png", root=tmp_path)


def test_report_contents_are_read_back_from_a_real_report(tmp_path):
    """A two-rule workflow through this Snakemake's own --report: the reader finds results, categories, files."""
    (tmp_path / "report").mkdir()
    (tmp_path / "report/workflow.rst").write_text("A toy workflow.\n")
    (tmp_path / "report/caption.rst").write_text("What **it** shows.\n")
    (tmp_path / "Snakefile").write_text(textwrap.dedent("""\
        report: "report/workflow.rst"
        rule all:
            input: "results/a.csv", "results/b.md"
        rule a:
            output: report("results/a.csv", caption="report/caption.rst", category="Cat A", subcategory="one")
            shell: "printf 'x,y\\\\n1,2\\\\n' > {output}"
        rule b:
            output: report("results/b.md", caption="report/caption.rst", category="Cat B")
            shell: "echo '# b' > {output}"
        """))
    assert snakemake("--cores", "1", cwd=tmp_path).returncode == 0
    assert snakemake("--report", "report.zip", cwd=tmp_path).returncode == 0
    contents = read_report(tmp_path / "report.zip")
    assert set(contents.results) == {"results/a.csv", "results/b.md"}
    assert contents.category_of("results/a.csv") == "Cat A" and contents.category_of("results/b.md") == "Cat B"
    assert "<strong>it</strong>" in contents.results["results/a.csv"]["caption"]
    assert contents.embedded_size("results/a.csv") == (tmp_path / "results/a.csv").stat().st_size
    assert "A toy workflow." in contents.html
    with pytest.raises(ValueError, match="declares no `var results = {...}`"):
        bad = tmp_path / "bad.html"
        bad.write_text("<html></html>")
        read_report(bad)


def test_an_extended_benchmark_file_names_its_rule_and_a_plain_one_is_matched_by_pattern(tmp_path):
    """The workflow profile asks for Snakemake's extended format: a real run through it writes files that name
    their rule and wildcards, which the summary takes as written (no pattern needed: here two rules share one);
    a file that names a rule the workflow no longer has is left out, and a plain file still goes by pattern."""
    (tmp_path / "Snakefile").write_text(textwrap.dedent("""\
        rule first:
            output: "out/{name}.txt"
            params: p={"k": [1, 2]}, tab="a\\tb"
            benchmark: "benchmarks/rules/shared/{name}.tsv"
            shell: "echo {wildcards.name} > {output}"
        rule second:
            output: "other/{name}.txt"
            benchmark: "benchmarks/rules/shared/{name}.tsv"
            shell: "echo {wildcards.name} > {output}"
        """))
    run = snakemake("--cores", "1", "--workflow-profile", str(REPO / "profiles/default"), "out/one.txt",
                    "other/two.txt", cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    one = read_benchmark(tmp_path / "benchmarks/rules/shared/one.tsv")
    assert (one["rule_name"], one["wildcards"], one["runs"]) == ("first", {"name": "one"}, 1)
    (tmp_path / "benchmarks/rules/plain").mkdir()
    (tmp_path / "benchmarks/rules/plain/x.tsv").write_text(HEADER + "2.00\t0:00:02\t5\t1\t1\t1\t0\t0\t1\t1\n")
    gone = (tmp_path / "benchmarks/rules/shared/one.tsv").read_text().replace("\tfirst\t", "\tremoved_rule\t")
    (tmp_path / "benchmarks/rules/gone.tsv").write_text(gone)
    declared = {"first": {"benchmark": "benchmarks/rules/shared/{name}.tsv", "rule_file": "Snakefile"},
                "second": {"benchmark": "benchmarks/rules/shared/{name}.tsv", "rule_file": "Snakefile"},
                "plain": {"benchmark": "benchmarks/rules/plain/{x}.tsv", "rule_file": "rules/nugget.smk"}}
    summary = write_rule_benchmarks("benchmarks/rules", declared, tmp_path / "out.csv", tmp_path / "out.png",
                                    root=tmp_path)
    assert summary["unmatched"] == ["benchmarks/rules/gone.tsv"]
    table = pd.read_csv(tmp_path / "out.csv").set_index("rule")
    assert table.loc["first", "slowest_job"] == "name=one" and table.loc["second", "slowest_job"] == "name=two"
    assert table.loc["plain", "slowest_job"] == "x=x" and table.loc["plain", "work"] == "NUGGET"
    (tmp_path / "benchmarks/rules/gone.tsv").write_text(gone.replace("{'name': 'one'}", "name=one"))
    with pytest.raises(ValueError, match="wildcards column is not a dict literal"):
        read_benchmark(tmp_path / "benchmarks/rules/gone.tsv")
