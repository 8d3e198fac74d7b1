"""The Snakemake DAG as a user meets it: lint, dry runs at every scale (relative mirror
paths, SLURM requests), and a smoke-scale end-to-end run of results/table2.csv in a
temporary directory. Config validation: test_config_validation.py."""

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")


def snakemake(*args, cwd=REPO, env_extra=None, timeout=600):
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    env.update(env_extra or {})
    return subprocess.run([SNAKEMAKE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_lint_is_clean():
    result = snakemake("--lint")
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "Congratulations" in out, out


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--configfile", "config/smoke.yaml"],
        ["--profile", "profiles/slurm", "--configfile", "config/paper.yaml"],
    ],
    ids=["demo", "smoke", "paper-slurm"],
)
def test_dry_run_every_scale(args, mirror, tmp_path):
    # An empty working directory: the whole DAG, whatever this checkout has built already.
    result = snakemake("-n", *args, "--directory", str(tmp_path), "results/table2.csv")
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    for rule in ("train_nugget", "nugget_base_gate", "evaluate_ranking", "table2"):
        assert rule in out, f"{rule} missing from the DAG:\n{out}"


def test_relative_mirror_is_resolved_where_snakemake_was_started(mirror, tmp_path):
    # As the README prints it: MULTIVEC_DATA_MIRROR relative to the directory snakemake is
    # typed in, while --directory moves the run elsewhere (as the tests do).
    relative = os.path.relpath(mirror, REPO)
    command = (f"cd {shlex.quote(str(REPO))} && MULTIVEC_DATA_MIRROR={shlex.quote(relative)} "
               f"{shlex.quote(SNAKEMAKE)} -n --configfile config/smoke.yaml --directory {shlex.quote(str(tmp_path))} "
               "results/table2.csv")
    result = subprocess.run(["bash", "-c", command], env=dict(os.environ, HF_HUB_OFFLINE="1"),
                            capture_output=True, text=True, timeout=600)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "train_nugget" in out and "download" in out, out


def _job_resources(dry_run_output):
    """{rule: [resources dict of each job]} from a dry run's job list."""
    jobs = {}
    for block in dry_run_output.split("\nrule ")[1:]:
        rule = block.split(":", 1)[0].strip()
        found = re.search(r"^\s+resources: (.*)$", block, re.MULTILINE)
        threads = re.search(r"^\s+threads: (\d+)$", block, re.MULTILINE)
        resources = dict(item.split("=", 1) for item in found.group(1).split(", ")) if found else {}
        resources["threads"] = int(threads.group(1)) if threads else 1
        jobs.setdefault(rule, []).append(resources)
    return jobs


def test_slurm_jobs_carry_account_partition_memory_runtime_and_gpus(mirror, tmp_path):
    # --cores 64 only lifts the dry run's local cap on threads (a real SLURM run has none).
    result = snakemake("-n", "--profile", "profiles/slurm", "--configfile", "config/paper.yaml", "--cores", "64",
                       "--directory", str(tmp_path), "results/table2.csv")
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    jobs = _job_resources(out)
    local = {"download", "gensim_test_data"}  # localrules: run where snakemake runs
    submitted = [(rule, r) for rule, rs in jobs.items() if rule not in local for r in rs]
    assert len(submitted) >= 50, sorted(jobs)
    for rule, resources in submitted:
        assert resources.get("slurm_account") == "CHANGE_ME_account", (rule, resources)
        assert resources.get("slurm_partition", "").startswith("CHANGE_ME_"), (rule, resources)
        assert int(resources["mem_mb"]) >= 8000 and int(resources["runtime"]) >= 120, (rule, resources)
    gpu_rules = {"train_nugget", "nugget_base_gate", "encode_task", "frozen_bottom_states"}
    gpu_jobs = [(rule, r) for rule, r in submitted if rule in gpu_rules]
    # 5 NUGGET + 2 TSDAE models per tables seed (paper: 3), their encoders + the base encoder x 2 tasks,
    # the shared frozen bottom of 2 tasks; the shared r = 1 model of each objective and its gate
    seeds = len(yaml.safe_load((REPO / "config/paper.yaml").read_text())["statistics"]["seeds"]["tables"])
    assert len(gpu_jobs) == 7 * seeds + (7 * seeds + 1) * 2 + 2 + 2 * 2
    for rule, resources in gpu_jobs:
        assert resources.get("gpu") == "1" and resources["slurm_partition"] == "CHANGE_ME_gpu_partition", rule
    for rule, resources in submitted:
        if rule not in gpu_rules:
            assert "gpu" not in resources and resources["slurm_partition"] == "CHANGE_ME_cpu_partition", rule
    trains = [r for rule, r in gpu_jobs if rule.startswith("train_")]
    assert all(r["threads"] == 8 and r["mem_mb"] == "64000" and r["runtime"] == "2880" for r in trains), trains


@pytest.mark.e2e
def test_smoke_end_to_end(smoke_table2):
    """Table 2 from nothing built (the README's main job at smoke scale; conftest's shared smoke copy)."""
    work, result = smoke_table2
    args = ("--configfile", "config/smoke.yaml", "--cores", "2", "results/table2.csv")
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-5000:]

    table = pd.read_csv(work / "results/table2.csv")
    assert list(table.columns) == ["row", "model", "objective", "ratio", "multi_vector", "PI", "PI_lo", "PI_hi",
                                   "PI_sd", "RR", "RR_lo", "RR_hi", "RR_sd", "paper_PI", "paper_RR",
                                   "vectors_per_doc", "n_queries_PI", "n_queries_RR", "train_steps", "best_dev_loss",
                                   "unigram_nats", "gate", "n_seeds"]
    # + 6 token-pooling rows: at NUGGET's four ratios and at the pool factors 2 and 3 (r = 0.5, 0.3333)
    assert len(table) == 16
    pooled = table[table["model"] == "Token pooling"].set_index("ratio")["vectors_per_doc"]
    nuggets = table[table["row"].str.startswith("nugget_mt_")].set_index("ratio")["vectors_per_doc"]
    assert sorted(pooled.index) == [0.05, 0.1, 0.15, 0.25, 0.3333, 0.5]
    # at NUGGET's ratios, token pooling keeps NUGGET's k per document
    assert pooled.loc[nuggets.index].round(6).tolist() == nuggets.round(6).tolist()
    assert (table["PI_lo"] <= table["PI"]).all() and (table["PI"] <= table["PI_hi"]).all()
    assert (table["n_seeds"] == 1).all()  # smoke's tables seed set: [13]
    tests = pd.read_csv(work / "results/table2_tests.csv")
    # 5 NUGGET rows vs their TSDAE and token pooling at their ratio x PI, RR
    assert len(tests) == 20 and tests["p_holm"].between(0, 1).all()
    markdown = (work / "results/table2.md").read_text()
    assert "Claims on this table" in markdown and "N1" in markdown and "N2" in markdown
    saved = json.loads((work / "models/nugget/mt/r0.1_l2_learned_fb/seed13/config.json").read_text())
    assert saved["model"]["seed"] == 13 and saved["train"]["seed"] == 13
    assert table["PI"].between(0, 100).all() and table["RR"].between(0, 100).all()
    assert (table["n_queries_PI"] == 12).all() and (table["n_queries_RR"] == 8).all()
    trained = table[table["model"].str.startswith(("NUGGET", "TSDAE"))]
    assert len(trained) == 7 and (trained["train_steps"] == 4).all()  # the zoo's steps (nugget_analysis.train)
    # every trained row carries its sanity gate; a miss is named, never silent
    assert trained["gate"].map(lambda g: g == "ok" or g.startswith("FAILED: ")).all()
    assert (trained["gate"] == "ok").eq(trained["best_dev_loss"] < trained["unigram_nats"]).all()
    # A row the paper has carries its published number beside ours.
    assert table["paper_PI"].notna().any()
    assert (work / "results/table2.md").read_text().count("\n") > 10

    # Every artifact the DAG wrote can be inspected.
    for artifact in ["data/built/corpora/autoencoding/train.jsonl", "data/built/tasks/pi",
                     "results/table2/nugget_mt_r0.1/seed13/pi.rankings.jsonl",
                     "data/encodings/nugget_mt_r0.1/seed13/pi", "models/nugget/mt/r0.1_l2_learned_fb/seed13",
                     "data/encodings/token_pooling/r0.1/pi",
                     "results/table2.csv",
                     "results/units/table2.tables.parquet"]:
        shown = subprocess.run([sys.executable, "-m", "multivec", "inspect", str(work / artifact)],
                               capture_output=True, text=True)
        assert shown.returncode == 0 and shown.stdout.strip(), (artifact, shown.stderr)

    # A second run of the same target schedules nothing.
    again = snakemake("-n", *args, cwd=work)
    assert again.returncode == 0
    assert "Nothing to be done" in again.stdout + again.stderr, again.stdout
    # Nor does raising the training safety net, as its error advises: it is a resource, not a param, so it
    # resumes a stopped model and leaves finished ones alone (multivec.training.safety_net).
    (work / "raised_net.yaml").write_text("train:\n  max_minutes: 999\n", encoding="utf-8")
    raised = snakemake("-n", "--configfile", "config/smoke.yaml", "raised_net.yaml", *args[2:], cwd=work)
    assert raised.returncode == 0 and "Nothing to be done" in raised.stdout + raised.stderr, raised.stdout[-3000:]


@pytest.mark.e2e
def test_smoke_end_to_end_nugget_beyond_table2(smoke_all):
    """Figs. 4-8, 11 and Tables 3, 4 at smoke scale, built by `all` on top of Table 2 (conftest's shared copy)."""
    work = smoke_all
    targets = ["results/nugget_fig4_bleu_vs_ratio.csv", "results/nugget_fig5_selected_tokens.csv",
               "results/nugget_fig6_highlight.html", "results/nugget_fig7_probability_gain.csv",
               "results/nugget_fig8_probability_gain_lengths.csv", "results/nugget_fig11_probability_gain_all.csv",
               "results/nugget_table3_lm.csv", "results/nugget_table4_ablations.csv", "results/nugget_fig5_shares.csv",
               "results/nugget_fig7_8_gain_bins.csv",
               # the smoke AE decoder reads positioned memory, so the exposures without it are built too
               "results/nugget_fig7_8_vectors_only_gain_bins.csv"]
    args = ("--configfile", "config/smoke.yaml", "--cores", "2", *targets)
    for target in targets:
        assert (work / target).is_file(), f"{target}: `all` did not build it"

    fig4 = pd.read_csv(work / "results/nugget_fig4_bleu_vs_ratio.csv")
    assert sorted(set(fig4["objective"])) == ["ae", "mt"] and len(fig4) == 6  # smoke ratios 0, 0.1, 0.25
    assert fig4["BLEU"].between(0, 100).all() and fig4["best_dev_loss"].gt(0).all()
    assert (fig4["BLEU_lo"] <= fig4["BLEU"] + 1e-9).all() and (fig4["BLEU"] <= fig4["BLEU_hi"] + 1e-9).all()
    for name in ["nugget_fig4", "nugget_fig5", "nugget_fig7_8", "nugget_fig7_8_vectors_only", "nugget_table3",
                 "nugget_table4"]:
        assert (work / f"results/{name}_tests.csv").exists(), name
    shares = pd.read_csv(work / "results/nugget_fig5_shares.csv")
    assert shares["row"].tolist() == ["ae", "mt"] and shares["nugget_share_eos_punct_lo"].notna().all()
    bins = pd.read_csv(work / "results/nugget_fig7_8_gain_bins.csv")
    assert bins["row"].tolist() == ["len64", "len128", "len256"] and "gain_d0_hi" in bins.columns
    assert (work / "results/nugget_fig4_bleu_vs_ratio.png").stat().st_size > 0
    table4 = pd.read_csv(work / "results/nugget_table4_ablations.csv")
    assert len(table4) == 10 and table4["PI"].between(0, 100).all() and table4["RR"].between(0, 100).all()
    assert table4["paper_pi"].notna().sum() == 8  # every row but the random selector and token pooling
    assert table4["name"].iloc[-1] == "token_pooling" and table4["PI_lo"].notna().all()  # with its units
    table3 = pd.read_csv(work / "results/nugget_table3_lm.csv")
    assert len(table3) == 5 and table3["ppl_h0"].gt(1).all() and table3["ppl_h0_lo"].notna().all()
    assert "drop_h0_h2" in table3.columns and (table3.loc[table3["row"] == "transformer", "drop_h0_h2"] == 0).all()
    table4_md = (work / "results/nugget_table4_ablations.md").read_text()
    assert all(f"N{k}" in table4_md for k in (8, 9, 10, 11)) and "Paired comparisons" in table4_md
    for name in ["nugget_fig7_probability_gain", "nugget_fig8_probability_gain_lengths",
                 "nugget_fig11_probability_gain_all", "nugget_fig5_selected_tokens"]:
        assert len(pd.read_csv(work / f"results/{name}.csv")) > 0, name
    assert "<html" in (work / "results/nugget_fig6_highlight.html").read_text().lower()
    again = snakemake("-n", *args, cwd=work)
    assert "Nothing to be done" in again.stdout + again.stderr, again.stdout


def _gpu_rules_in_rule_files():
    """Rules that declare a `gpu` resource (rules/*.smk)."""
    found = set()
    for path in (REPO / "rules").glob("*.smk"):
        rule = None
        for line in path.read_text().splitlines():
            if re.match(r"\s*rule \w+:", line):  # rules defined under an `if` are indented
                rule = line.split()[1].rstrip(":")
            elif re.match(r"\s+(\*\*family_resources\(.*gpu=True|gpu=family_gpu\()", line):
                found.add(rule)
    return found


def test_every_gpu_job_of_the_whole_paper_dag_goes_to_the_gpu_partition(mirror, tmp_path):
    profile = yaml.safe_load((REPO / "profiles/slurm/config.yaml").read_text())
    on_gpu_partition = {rule for rule, r in profile["set-resources"].items()
                        if r.get("slurm_partition") == "CHANGE_ME_gpu_partition"}
    assert on_gpu_partition == _gpu_rules_in_rule_files()
    result = snakemake("-n", "--profile", "profiles/slurm", "--configfile", "config/paper.yaml", "--cores", "64",
                       "--directory", str(tmp_path), "all")
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    jobs = _job_resources(out)
    # every work's training runs on a GPU at paper scale
    for rule in ("train_nugget", "train_nugget_lm", "subencoder_model_train",
                 "distill_student_train", "distill_student_embed", "structural_teacher_embeddings"):
        assert rule in jobs, sorted(jobs)
    for rule, resources in ((rule, r) for rule, rs in jobs.items() for r in rs):
        if resources.get("gpu") == "1":
            assert resources["slurm_partition"] == "CHANGE_ME_gpu_partition", (rule, resources)
        elif rule not in {"download", "gensim_test_data"}:
            assert resources["slurm_partition"] == "CHANGE_ME_cpu_partition", (rule, resources)


def test_scripts_read_settings_from_params_not_the_config():
    """A setting a script reads from ``snakemake.config`` is invisible to Snakemake's params trigger: changing
    it (e.g. ``nugget.encoder``, whose unknown token replaces WikiText's <unk>) would not rerun the rule."""
    scripts = sorted((Path(__file__).resolve().parents[1] / "workflow" / "scripts").glob("*.py"))
    # the mirror is where inputs come from, not what they are (their sha256 is checked): moving it reruns nothing
    allowed = 'snakemake.config.get("data_mirror")'
    offenders = [path.name for path in scripts
                 if "snakemake.config" in path.read_text(encoding="utf-8").replace(allowed, "")]
    assert len(scripts) > 50 and not offenders, f"pass these settings as params instead: {offenders}"


def test_training_rules_carry_the_safety_net_as_a_resource():
    """``max_minutes`` in a training rule's params made raising it (as TrainingTimeLimitError advises) retrain
    every finished model through the params trigger, not resume the stopped one; it is a resource instead."""
    scripts = REPO / "workflow" / "scripts"
    engine_scripts = sorted(path.name for path in scripts.glob("*.py") if "TrainConfig." in path.read_text("utf-8"))
    by_rule = {name: block for name, block in _rule_blocks().items()
               if any(f"scripts/{script}" in block for script in engine_scripts)}
    assert {"train_nugget", "train_nugget_lm", "subencoder_model_train", "distill_student_train"} <= set(by_rule)
    for script in engine_scripts:
        text = (scripts / script).read_text("utf-8")
        if "params.train" in text:  # a rule whose settings carry the net (the segmenter's do not)
            assert "TrainConfig.from_rule(" in text and "TrainConfig.from_dict(" not in text, script
    for name, block in by_rule.items():
        if "params.train" not in (scripts / re.search(r"scripts/(\w+\.py)", block).group(1)).read_text("utf-8"):
            continue
        params = re.search(r"^    params:\n(.*?)^    \w+:", block, flags=re.M | re.S).group(1)
        resources = re.search(r"^    resources:\n(.*?)^    \w+:", block, flags=re.M | re.S).group(1)
        assert "train=lambda wc: rule_settings(" in params, name
        assert "max_minutes=lambda wc: safety_net_resource(" in resources, name


def test_training_rules_declare_files_not_directories():
    """Snakemake deletes a ``directory()`` output before it reruns a killed job, checkpoint/ included, so a
    training rule with one restarts from step 0 instead of resuming (the seq2seq segmenter did)."""
    import re

    rules_dir = Path(__file__).resolve().parents[1] / "rules"
    offenders, trainers = [], 0
    for smk in sorted(rules_dir.glob("*.smk")):
        for block in re.split(r"^rule ", smk.read_text(encoding="utf-8"), flags=re.M)[1:]:
            name = block.split(":", 1)[0].strip()
            if not re.search(r"(^|_)train($|_)", name):  # train_nugget, subencoder_model_train, ...
                continue
            trainers += 1
            output = re.search(r"^    output:\n(.*?)^    \w+:", block, flags=re.M | re.S)
            declared = "\n".join(line.split("#", 1)[0] for line in output.group(1).splitlines()) if output else ""
            if "directory(" in declared:
                offenders.append(f"{smk.name}: rule {name}")
    assert trainers >= 5, "no training rules found: the rule parser no longer matches rules/*.smk"
    assert not offenders, f"training rules with a directory() output (would not resume): {offenders}"


# Imported by no module that the Snakefile or a rule file imports: each costs every Snakemake start (a dry run, each
# job of a SLURM run, which parses the workflow again) seconds that no rule uses. Measured on the reference machine:
# `snakemake --list-rules` took 10.1 s (5.7 s CPU) while rules/nugget_gain.smk pulled in torch and transformers
# and rules/common.smk torch, pandas and scipy; 1.8 s without them. (Snakemake's SLURM plugin imports pandas
# itself, so the whole parse cannot be checked; the project's imports can.)
HEAVY_AT_PARSE = ("torch", "transformers", "pandas", "scipy", "sklearn", "sentence_transformers", "gensim")


def test_the_modules_the_workflow_imports_while_it_parses_load_no_heavy_library():
    sources = [REPO / "Snakefile", *sorted((REPO / "rules").glob("*.smk"))]
    modules = sorted({m for path in sources for m in re.findall(r"^\s*(?:from|import)\s+(multivec[\w.]*)",
                                                                   path.read_text(encoding="utf-8"), flags=re.M)})
    assert "multivec.statistics.claims_file" in modules and "multivec.nugget.tables.encoding_folders" in modules
    assert {"multivec.rules.paths", "multivec.rules.nugget_zoo", "multivec.rules.distill_students"} \
        <= set(modules)
    offenders = _modules_that_load(modules, HEAVY_AT_PARSE)
    assert not offenders, f"modules the workflow imports while it parses load heavy libraries: {offenders}"


def _modules_that_load(modules, libraries) -> list:
    """``[module, [libraries it loads]]`` for each of ``modules`` imported in turn in a fresh interpreter (a
    library already loaded by an earlier module is charged to that one)."""
    code = ("import importlib, json, sys\n"
            f"for name in {sorted(modules)!r}:\n"
            "    before = set(sys.modules)\n"
            "    importlib.import_module(name)\n"
            f"    heavy = sorted(h for h in {tuple(libraries)!r} if h in set(sys.modules) - before)\n"
            "    if heavy:\n"
            "        print(json.dumps([name, heavy]))\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=dict(os.environ, HF_HUB_OFFLINE="1"),
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.mark.parametrize("package", ["multivec.statistics", "multivec.evaluation", "multivec.training",
                                     "multivec.metrics"])
def test_lazily_exported_names_resolve(package):
    """The packages load their names on first use (multivec.pipeline.lazy_exports): every exported name must still resolve
    to its submodule's object, and an unknown one must raise AttributeError."""
    import importlib

    module = importlib.import_module(package)
    for name in module.__all__:
        found = getattr(module, name)
        assert found is getattr(importlib.import_module(f"{package}.{module._WHERE[name]}"), name), name
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        module.not_a_name


def _rule_blocks() -> dict[str, str]:
    """Each rule's text, by name, from the rule files."""
    blocks = {}
    for path in sorted((REPO / "rules").glob("*.smk")):
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"^(?:rule|checkpoint) (\w+):\n((?:(?:[ \t]+.*)?\n)*)", text, re.MULTILINE):
            blocks[match.group(1)] = match.group(2)
    return blocks


def test_local_rules_exist_and_are_light():
    """A cluster run keeps the localrules on the submitting host (~8 s of SLURM per job saved). Only
    aggregation may be local: a rule that loads a model (the encode/train resource families), asks for a GPU
    or more than one thread must be a cluster job, and a misspelt name would silently submit the rule."""
    from slurm_accounting import declared_localrules

    blocks = _rule_blocks()
    local = declared_localrules(REPO)
    assert {"download", "claims", "table2", "units_table2"} <= local
    assert local <= set(blocks), sorted(local - set(blocks))
    heavy = {name: blocks[name] for name in local
             if re.search(r'family_\w+\("(encode|train)"|gpu|threads: *([2-9]|\d\d)', blocks[name])}
    assert not heavy, sorted(heavy)
    # The check itself sees a heavy rule.
    assert re.search(r'family_\w+\("(encode|train)"', blocks["train_nugget"])


# A local rule runs on the submitting host beside the cluster jobs' own Snakemake processes; at the rehearsal's
# sizes its imports were most of its time: the Figs. 7, 8, 11 rules read gains through the module that computes
# them with the model (torch and transformers, 7-10 s a job), and Tables 2 and 4 read metric files through the
# scoring module (torch). Measured at rehearsal scale, the 47 local jobs: 5.0 -> 2.5 s (Table 4), 10 -> 3.5 s
# (each figure), 7.5 -> 1.8 s (the gain units).
HEAVY_IN_LOCAL_RULES = ("torch", "transformers", "sentence_transformers", "gensim", "sklearn")


def test_local_rule_scripts_import_no_model_library():
    """What every local rule's script imports at its top loads no model library (what they call is checked in
    the tests of those functions, e.g. gain_measurements in tests/test_nugget_statistics.py)."""
    import ast

    from slurm_accounting import declared_localrules

    blocks = _rule_blocks()
    modules = set()
    scripts = 0
    for name in sorted(declared_localrules(REPO)):
        script = re.search(r'^\s+script:\s*\n\s+"([^"]+)"', blocks[name], flags=re.M)
        if not script:
            continue
        scripts += 1
        tree = ast.parse((REPO / "rules" / script.group(1)).resolve().read_text(encoding="utf-8"))
        for node in tree.body:  # top level only: a script's function-level imports run when it calls them
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("multivec"):
                modules.add(node.module)
            elif isinstance(node, ast.Import):
                modules.update(a.name for a in node.names if a.name.startswith("multivec"))
    assert scripts >= 20 and "multivec.nugget.analysis.gain_tables" in modules, (scripts, sorted(modules))
    offenders = _modules_that_load(modules, HEAVY_IN_LOCAL_RULES)
    assert not offenders, f"local rules' scripts import modules that load a model library: {offenders}"


# The `raise` statements the rule files may still hold, each with its reason. A bad config is refused by the
# config layer (multivec.config) before any rule file is read, with every problem at once; a rule file that
# raises stops at its first problem, with no key path. The list only shrinks: it is empty now (Table 4's checks
# against the zoo are multivec.config.cross_checks.table4_zoo_problems; an untrained row asked for its model is
# a caller's error raised by multivec.rules.nugget_zoo).
RULE_FILE_RAISES: set[tuple[str, str]] = set()


def rule_file_raises(rules: Path) -> set[tuple[str, str]]:
    """(rule file, the first 40 characters of the message) of every ``raise`` in the rule files."""
    found = set()
    for path in sorted(rules.glob("*.smk")):
        for match in re.finditer(r"raise \w+\(f?\"([^\"]{0,40})", path.read_text(encoding="utf-8")):
            found.add((path.name, match.group(1)))
    return found


def unexplained_raises(found: set[tuple[str, str]]) -> list[tuple[str, str]]:
    return sorted(f for f in found if not any(f[0] == name and f[1].startswith(start[:40])
                                              for name, start in RULE_FILE_RAISES))


def test_rule_files_leave_config_errors_to_the_config_layer(tmp_path):
    found = rule_file_raises(REPO / "rules")
    unexplained = unexplained_raises(found)
    assert not unexplained, (f"rule files raise {unexplained}: check the config in multivec.config "
                             "(cross_checks) instead, or list the raise in RULE_FILE_RAISES with its reason")
    gone = sorted(r for r in RULE_FILE_RAISES if not any(f[0] == r[0] and f[1].startswith(r[1][:40]) for f in found))
    assert not gone, f"no longer raised, remove from RULE_FILE_RAISES: {gone}"
    # the check sees a new one
    (tmp_path / "x.smk").write_text('if config["seed"] < 0:\n    raise ValueError(f"config seed {config[\'seed\']}")\n')
    assert unexplained_raises(rule_file_raises(tmp_path)) == [("x.smk", "config seed {config['seed']}")]
