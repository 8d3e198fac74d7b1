"""Every results table re-renders from committed files (multivec.io.committed_inputs): the small JSON files a
table reads besides its unit file are copied byte for byte to results/inputs/, the distillation table reads
embeddings' meta.json only, its frozen-backbone check and the matrix's index sizes are records of their own,
and no table rule of the DAG reads anything outside results/ and config/ (at demo and paper scale)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from multivec.io import MalformedInputError, write_json
from multivec.io.committed_inputs import INPUTS_ROOT, committed_folder, committed_input, copy_input, source_of

REPO = Path(__file__).resolve().parents[1]

# The rules that render a results table, figure or verdict from unit files: what docs/statistics.md's re-render
# command runs. distill_geometry is exempt: it tests every pair of each task's documents (about 140,000 for RR),
# too many units to commit; distill_loss_curves draws training curves and has no statistics.
TABLE_RULES = ("table2", "nugget_table3", "nugget_table4", "nugget_fig4", "nugget_fig5_shares",
               "nugget_fig7_8_gain_bins", "subencoder_eval_tables", "subencoder_data_table7", "distill_teachers_table",
               "distill_table", "distill_imdb_table", "representation_matrix", "claims_of_work", "claims")


def test_a_copy_keeps_the_path_under_results_inputs():
    assert committed_input("models/nugget/ae/r0.1/seed13/training_summary.json") == (
        "results/inputs/models/nugget/ae/r0.1/seed13/training_summary.json")
    assert committed_folder("data/distill/concat/eval_lee/") == "results/inputs/data/distill/concat/eval_lee"
    assert INPUTS_ROOT == "results/inputs"


@pytest.mark.parametrize("path", ["results/table2.csv", "models/nugget/ae/r0.1/seed13/model.safetensors",
                                  "config/config.yaml", "/abs/models/x.json"])
def test_only_json_files_under_models_or_data_have_a_copy(path):
    with pytest.raises(ValueError, match="committed copy"):
        committed_input(path)


def test_a_file_inside_a_directory_output_depends_on_its_folder():
    assert source_of("data/distill/concat/eval_lee/meta.json") == "data/distill/concat/eval_lee"
    assert source_of("models/nugget/ae/r0.1/seed13/config.json") == "models/nugget/ae/r0.1/seed13/config.json"


def test_the_copy_is_byte_for_byte_and_a_malformed_file_is_refused(tmp_path):
    source = tmp_path / "summary.json"
    source.write_bytes(b'{"best_dev_loss": 3.25,\n  "train_minutes": 0.1}\n')
    copy = copy_input(source, tmp_path / "results" / "inputs" / "summary.json")
    assert copy.read_bytes() == source.read_bytes()
    bad = tmp_path / "bad.json"
    bad.write_text('{"best_dev_loss": 3.25,,}')
    with pytest.raises(MalformedInputError, match="bad.json"):
        copy_input(bad, tmp_path / "out.json")
    assert not (tmp_path / "out.json").exists()


def test_the_distillation_tables_read_meta_json_alone(tmp_path):
    """build_rows and teacher_row on committed folders (meta.json, no vectors) give the rows they give on the
    embeddings folders themselves."""
    from multivec.distill import embeddings
    from multivec.distill.tables.main_table import build_rows
    from multivec.distill.tables.teacher_table import teacher_row
    from multivec.rules.distill_students import committed_entries, committed_entry_files

    rng = np.random.default_rng(0)
    tasks = ["lee", "pi"]
    entries = []
    for name, kind, seed, dim in [("structural_teacher", "structural_teacher", None, 5),
                                  ("student_both", "student", 13, 4)]:
        folders = {}
        for task in tasks:
            folders[task] = f"data/distill/{name}{seed}/eval_{task}"
            embeddings.write_embeddings(tmp_path / folders[task], ["a", "b", "c"], rng.normal(size=(3, dim)),
                                        {"model": name, "seconds": 6.0})
        entry = {"name": name, "kind": kind, "seed": seed, "embeddings": folders}
        if kind == "student":
            entry["summary"] = f"models/distill/{name}/seed{seed}/training_summary.json"
            write_json(tmp_path / entry["summary"], {"train_minutes": 2.5})
        entries.append(entry)
    committed = committed_entries(entries)
    assert committed[1]["summary"] == "results/inputs/models/distill/student_both/seed13/training_summary.json"
    for copy in committed_entry_files(entries):
        source = copy.removeprefix(INPUTS_ROOT + "/")
        copy_input(tmp_path / source, tmp_path / copy)
    assert not list((tmp_path / INPUTS_ROOT).rglob("*.safetensors"))
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        rows = build_rows(committed, tasks)
        assert pd.DataFrame(rows).equals(pd.DataFrame(build_rows(entries, tasks)))  # NaN metrics: filled later
        assert [(r["row"], r["dimension"], r["train_minutes"]) for r in rows] == [
            ("structural_teacher", 5, ""), ("student_both", 4, 2.5)]
        folders = {"train": committed[0]["embeddings"]["lee"], **{f"eval_{t}": f for t, f in
                                                                  committed[0]["embeddings"].items()}}
        originals = {"train": entries[0]["embeddings"]["lee"], **{f"eval_{t}": f for t, f in
                                                                  entries[0]["embeddings"].items()}}
        row = teacher_row("sbert", "structural", folders, tasks)
        assert pd.Series(row).equals(pd.Series(teacher_row("sbert", "structural", originals, tasks)))
        assert row["dimension"] == 5 and row["embed_minutes"] == 0.3
    finally:
        os.chdir(cwd)


def test_read_meta_names_a_missing_or_malformed_file(tmp_path):
    from multivec.distill.embeddings import read_meta

    with pytest.raises(FileNotFoundError, match="meta.json"):
        read_meta(tmp_path)
    (tmp_path / "meta.json").write_text("[1, 2]")
    with pytest.raises(MalformedInputError, match="JSON object"):
        read_meta(tmp_path)


def test_the_matrix_sizes_round_trip_through_their_record(tmp_path):
    from multivec.evaluation.representation_matrix import Size, read_sizes, sizes_record

    sizes = {("BM25", "PI"): Size.of_postings(37.25), ("NUGGET", "RR"): Size.of_vectors(12.5, 384),
             ("lexical", "PropSegment"): Size(None, None, None)}
    write_json(tmp_path / "sizes.json", sizes_record(sizes))
    assert read_sizes(tmp_path / "sizes.json") == sizes
    write_json(tmp_path / "bad.json", {"BM25": {"PI": {"dimension": None}}})
    with pytest.raises(KeyError, match="BM25 on PI has no vectors_per_document, bytes_per_document"):
        read_sizes(tmp_path / "bad.json")


# The DAG's jobs and their inputs, through Snakemake's Python API (its own process: the API changes directory).
_DAG_INPUTS = r"""
import json, sys
from pathlib import Path
from snakemake.api import SnakemakeApi
from snakemake.settings.types import (ConfigSettings, DAGSettings, OutputSettings, Quietness, ResourceSettings,
                                      StorageSettings)
with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
    workflow_api = api.workflow(resource_settings=ResourceSettings(), storage_settings=StorageSettings(),
                                config_settings=ConfigSettings(configfiles=[Path(p) for p in sys.argv[3:]]),
                                snakefile=Path(sys.argv[1]), workdir=Path(sys.argv[2]))
    workflow_api.dag(dag_settings=DAGSettings(targets={"all"}))
    workflow = workflow_api._workflow  # not public: the project pins Snakemake 9 (multivec.pipeline.report_flags)
    workflow._prepare_dag(forceall=False, ignore_incomplete=True, lock_warn_only=True, nolock=True)
    workflow._build_dag()
    print(json.dumps([[job.rule.name, [str(f) for f in job.input]] for job in workflow.dag.jobs]))
"""


@pytest.mark.parametrize("configfiles", [[], ["config/paper.yaml"]], ids=["demo", "paper"])
def test_every_table_rule_reads_results_and_config_only(tmp_path, configfiles):
    """What makes the re-render command of docs/statistics.md work in a clone without models/ and data/."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    result = subprocess.run([sys.executable, "-c", _DAG_INPUTS, str(REPO / "Snakefile"), str(tmp_path),
                             *[str(REPO / f) for f in configfiles]], cwd=REPO, env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    jobs = json.loads(result.stdout.strip().splitlines()[-1])
    table_jobs = [(rule, inputs) for rule, inputs in jobs if rule in TABLE_RULES]
    assert {"table2", "distill_table", "claims"} <= {rule for rule, _ in table_jobs}
    config_dir = str(REPO / "config") + "/"
    outside = sorted({(rule, f) for rule, inputs in table_jobs for f in inputs
                      if not (f.startswith("results/") or f.startswith(config_dir) or f.startswith("config/"))})
    assert not outside, f"table rules reading files a clone does not have: {outside[:10]}"


def _rerender_command():
    """The re-render command of docs/statistics.md, as words after `snakemake`."""
    import shlex

    text = (REPO / "docs" / "statistics.md").read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if "snakemake" in line and "--allowed-rules all" in line)
    words = shlex.split(line)
    return words[words.index(next(w for w in words if w.endswith("snakemake"))) + 1:]


def test_the_documented_command_forces_every_table_rule_and_allows_nothing_else():
    words = _rerender_command()
    allowed = words[words.index("--allowed-rules") + 1:words.index("--forcerun")]
    forced = words[words.index("--forcerun") + 1:]
    demo_rules = [r for r in TABLE_RULES if r != "distill_imdb_table"]  # the IMDB table is paper scale only
    assert allowed == ["all", *demo_rules] and forced == demo_rules


@pytest.mark.e2e
def test_a_clone_without_models_or_data_rerenders_every_table_byte_for_byte(tmp_path, mirror, copy_of_smoke_all):
    """The smoke DAG built, then models/ and data/ moved away: the documented command rewrites every table, tests
    file, figure and claims file under results/, and each comes out byte-identical."""
    import hashlib

    work = copy_of_smoke_all(tmp_path / "wf")

    def digests():
        return {p.relative_to(work).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in (work / "results").rglob("*") if p.is_file()}

    before = digests()
    for folder in ("models", "data"):
        (work / folder).rename(tmp_path / folder)
    words = _rerender_command()
    at = words.index("--cores")
    words = [*words[:at], "--configfile", "config/smoke.yaml", "--cores", "2", *words[at + 2:]]
    result = subprocess.run([str(Path(sys.executable).parent / "snakemake"), *words], cwd=work,
                            env=dict(os.environ, HF_HUB_OFFLINE="1"), capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, (result.stdout + result.stderr)[-5000:]
    log = result.stdout + result.stderr
    ran = set(re.findall(r"^(?:local)?rule (\w+):", log, flags=re.M))
    assert {"table2", "distill_table", "representation_matrix", "claims"} <= ran, ran
    assert ran <= {"all", *TABLE_RULES}, ran
    after = digests()
    assert after.keys() == before.keys()
    changed = sorted(path for path in before if before[path] != after[path])
    assert not changed, f"re-rendered without models/ and data/, these differ: {changed}"


def test_the_rule_writes_where_the_module_says():
    text = (REPO / "rules" / "committed_inputs.smk").read_text(encoding="utf-8")
    assert f'"{INPUTS_ROOT}/{{path}}"' in text
