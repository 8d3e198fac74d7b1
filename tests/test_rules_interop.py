"""The exports' plan (multivec.rules.interop, rules/interop.smk, target `exports`): which trained models each scale
exports, which it skips with the library's reason, and which rankings become TREC files. In-process, no job."""

import copy
import json
import re
from pathlib import Path

import pytest

from multivec.pipeline.targets import EXPORT_RULES, EXPORT_TARGETS, MAIN_TARGETS, TARGET_RULES, WORK_TARGETS
from multivec.rules.interop import (MANIFEST, Exports, card_metrics, exportable_models, is_t5, nugget_refusal,
                                    trec_run_name)
from multivec.rules.nugget_table2 import Table2Runs
from multivec.rules.nugget_zoo import NuggetZoo
from rules_configs import REPO, scale_config, seed_sets


@pytest.fixture(scope="module", params=["smoke", "demo", "paper"])
def scale(request):
    config = scale_config(request.param)
    return request.param, config, Exports(config, seed_sets(config))


def _table2(config):
    return Table2Runs(config, NuggetZoo(config), seed_sets(config))


def test_every_trained_table2_model_is_exported_or_skipped_once(scale):
    _, config, exports = scale
    table2 = _table2(config)
    expected = {(f"nugget/{row}/seed{seed}", table2.zoo.model_dir(row, seed))
                for seedset in ("tables", "claims") for _, row, seed, _ in table2.table2_ranking_files(seedset)
                if table2.is_trained(row)}
    planned = [(m.name, m.folder) for m in exports.models + exports.skipped if m.name.startswith("nugget/")]
    assert len(planned) == len(set(planned)) and set(planned) == expected
    for model in exports.models:
        assert model.dest == f"exports/models/{model.name}"
        assert all(path.startswith(model.folder + "/") for path in model.inputs), model
        if model.name.startswith("nugget/"):
            row = model.name.split("/")[1]
            assert model.kind == table2.rows[row]["kind"] and [t for t, _ in model.metrics] == ["pi", "rr"]
            assert all(path == f"results/table2/{row}/{model.name.rsplit('/', 1)[1]}/{task}.json"
                       for task, path in model.metrics)


@pytest.mark.parametrize("name", ["smoke", "demo"])
def test_smoke_and_demo_export_every_kind_and_skip_nothing(name):
    config = scale_config(name)
    exports = Exports(config, seed_sets(config))  # paper scale skips some: the next test
    assert not exports.skipped
    kinds = {m.kind for m in exports.models}
    assert kinds == {"nugget", "tsdae", "student", "subencoder"}
    # students of results/distill_table and the SubEncoders of the retrieval tables (full, reduced, PCA)
    names = {m.name for m in exports.models}
    assert any(n.startswith("distill/ls_") for n in names)
    variants = {n.split("/")[1].rsplit("_", 1)[1] for n in names if n.startswith("subencoder/")}
    assert "full" in variants and any(v.startswith("d") for v in variants) and any(v.startswith("pca") for v in variants)


def test_paper_scale_skips_mbart_nugget_and_t5_subencoders_with_the_reason():
    config = scale_config("paper")
    models, skipped = exportable_models(config, seed_sets(config))
    nugget = [s for s in skipped if s.name.startswith("nugget/")]
    assert nugget and all("mbart" in s.reason for s in nugget)
    assert not [m for m in models if m.kind in ("nugget", "tsdae")]  # every Table 2 model is mBART at paper scale
    t5 = {s.name.split("/")[1].rsplit("_", 1)[0] for s in skipped if s.kind == "subencoder"}
    assert t5 == {"st5_base", "gtr_base"} and all("T5" in s.reason for s in skipped if s.kind == "subencoder")
    assert {m.name.split("/")[1] for m in models if m.kind == "subencoder"} == {"simcse_full"}
    assert any(m.kind == "student" for m in models)


def test_a_sentence_boundary_selector_is_skipped():
    config = copy.deepcopy(scale_config("demo"))
    config["nugget"]["selector"] = "sentence_boundary"
    models, skipped = exportable_models(config, seed_sets(config))
    assert not [m for m in models if m.kind == "nugget"] and {m.kind for m in models if m.name.startswith("nugget/")} \
        == {"tsdae"}  # TSDAE has no selector
    assert skipped and all("sentence_boundary" in s.reason for s in skipped)
    assert nugget_refusal({"architecture": "bert_decoder", "bottleneck": "nuggets", "selector": "learned"},
                          "nugget") is None


def test_t5_names():
    for name in ("sentence-transformers/sentence-t5-base", "sentence-transformers/gtr-t5-base", "t5-small",
                 "google/mt5-small"):
        assert is_t5(name), name
    for name in ("tiny-random-bert", "princeton-nlp/sup-simcse-bert-base-uncased", "minilm", "gpt2", "bert-t50"):
        assert not is_t5(name), name


def test_trec_exports_cover_every_ranking_evaluation_of_table2(scale):
    _, config, exports = scale
    table2 = _table2(config)
    files = {f for seedset in ("tables", "claims") for f, *_ in table2.table2_ranking_files(seedset)}
    assert {f"results/table2/{run}/{task}.rankings.jsonl" for run, task in exports.trec_runs()} == files
    targets = exports.targets()
    assert targets[0] == MANIFEST and len(targets) == len(set(targets))
    assert {m.dest for m in exports.models} <= set(targets)
    for run, task in exports.trec_runs():
        assert {f"exports/trec/{run}/{task}.run", f"exports/trec/{run}/{task}.qrels"} <= set(targets)
        assert re.fullmatch(table2.run_pattern, run)
    assert trec_run_name("nugget_mt_r0.1/seed13", "pi") == "nugget_mt_r0.1_seed13_pi"


def test_the_model_wildcard_matches_exactly_the_exported_names(scale):
    _, _, exports = scale
    pattern = exports.model_pattern()
    for model in exports.models:
        assert re.fullmatch(pattern, model.name)
    for other in [*(s.name for s in exports.skipped), "nugget/bm25", "distill/x/seed1"]:
        assert not re.fullmatch(pattern, other), other


def test_the_manifest_lists_each_model_once_with_its_status(scale):
    _, _, exports = scale
    rows = exports.manifest_rows()
    assert len(rows) == len(exports.models) + len(exports.skipped) == len({r["name"] for r in rows})
    assert all((r["status"] == "skipped") == bool(r["reason"]) == (r["export"] == "") for r in rows)


def test_card_metrics_keep_each_tasks_scores(tmp_path):
    files = {}
    for task, mrr in (("pi", 38.7), ("rr", 51.0)):
        path = tmp_path / f"{task}.json"
        path.write_text(json.dumps({"row": "r", "task": task, "mrr": mrr, "n_queries": 12, "method": "maxsim_mean",
                                    "truncation": {"documents": 3}}))
        files[task] = str(path)
    metrics = card_metrics(files)
    assert metrics["pi"] == {"mrr": 38.7, "n_queries": 12, "method": "maxsim_mean"} and metrics["rr"]["mrr"] == 51.0
    assert metrics["sources"] == list(files.values())
    assert card_metrics({}) == {}


def test_exports_is_a_target_outside_all_and_its_rules_are_the_rule_files():
    assert EXPORT_TARGETS == ("exports",) and "exports" in TARGET_RULES and "exports" in MAIN_TARGETS
    assert "exports" not in WORK_TARGETS
    text = (REPO / "rules" / "interop.smk").read_text(encoding="utf-8")
    assert tuple(re.findall(r"^rule (\w+):", text, flags=re.M)) == EXPORT_RULES
    snakefile = (REPO / "Snakefile").read_text(encoding="utf-8")
    all_rule = re.search(r"^rule all:\n((?:[ \t].*\n|\n)*)", snakefile, flags=re.M).group(1)
    assert "EXPORTS" not in all_rule and 'include: "rules/interop.smk"' in snakefile
    assert re.search(r'^rule exports:\n    """[^\n]+"""\n', snakefile, flags=re.M)  # a one-line docstring
    assert Path(REPO / "workflow" / "scripts" / "export_model.py").is_file()


def test_each_table2_run_on_both_tasks_becomes_one_mteb_export(scale):
    from multivec.nugget.tables.table2_rows import SIMILARITY
    from multivec.rules.interop import MTEB_MODEL_TYPES, MTEB_RESULTS

    name, config, exports = scale
    runs = {run for run, _ in exports.trec_runs()}
    mteb = exports.mteb_exports()
    assert {e.run for e in mteb} == runs and len({e.dest for e in mteb}) == len(mteb)
    assert {e.dest for e in mteb} <= set(exports.targets())
    patterns = exports.mteb_patterns()
    table2 = _table2(config)
    for export in mteb:
        row, seed = export.run.split("/seed") if "/seed" in export.run else (export.run, None)
        assert export.dest == MTEB_RESULTS.format(model=f"multivec__{row}", revision=export.revision)
        assert export.revision == (name if seed is None else f"{name}-seed{seed}")
        assert export.name == f"multivec/{row}"
        assert export.model_type == MTEB_MODEL_TYPES[SIMILARITY.get(table2.rows[row]["kind"], "bm25")]
        assert re.fullmatch(patterns["model"], export.model) and re.fullmatch(patterns["revision"], export.revision)
        assert exports.mteb_export(export.model, export.revision) == export
    kinds = {table2.rows[e.run.split("/seed")[0]]["kind"]: e.model_type for e in mteb}
    assert kinds.get("bm25", "sparse") == "sparse" and kinds.get("nugget") == "late-interaction"
    with pytest.raises(KeyError):
        exports.mteb_export("multivec__nope", name)


def test_propsegment_runs_cover_every_ranking_the_retrieval_tables_read(scale):
    from multivec.rules.interop import PropsegmentRun
    from multivec.rules.subencoder import Subencoder
    from multivec.subencoder.tables import units

    name, config, exports = scale
    work = Subencoder(config, seed_sets(config))
    expected = set()
    for table in work.retrieval_tables:  # the unit files' entries: the table seeds, and the claim seeds if claimed
        claimed = bool(exports.seeds.claimed_rows(units.stat_table_name(table)))
        sources = {s.row: s for s in units.table_rows(table, work.layout)}
        for seedset in ("tables", "claims") if claimed else ("tables",):
            for entry in work.subencoder_unit_entries(table, seedset):
                for ranking in units.row_rankings(table, sources[entry["row"]]):
                    expected.add((entry["path"], entry["part"], ranking))
    runs = exports.propsegment_runs()
    assert len(runs) == len(set(runs)) and {(r.json, r.part, r.ranking) for r in runs} == expected
    # every evaluation the tables read, at every scale: Table 1's protocols, Table 4's levels, Table 8's parts
    rankings = {r.name for r in runs}
    assert rankings >= {"authors", "own_sentence_excluded", "sentence", "document"}
    assert {"gold_authors", "predicted_authors"} <= rankings or "table8" not in work.retrieval_tables
    assert any(r.evaluation.startswith("retrieval/lexical_") for r in runs) == work.layout.lexical
    trained = {r.evaluation for r in runs if "/seed" in r.evaluation}
    assert {e.rsplit("/seed", 1)[1] for e in trained} == {str(s) for s in exports.seeds.model_seeds("tables")
                                                         + exports.seeds.model_seeds("claims")}
    targets = exports.targets()
    patterns = exports.propsegment_patterns()
    table2 = {f"exports/trec/{run}/{task}.run" for run, task in exports.trec_runs()}
    for run in runs:
        assert run.rankings == run.json.removesuffix(".json") + ".rankings.jsonl"
        assert run.rankings.startswith(("results/subencoder/retrieval/", "results/subencoder/predicted/"))
        assert run.run == f"exports/trec/subencoder/{run.evaluation}/{run.name}.run" and run.run not in table2
        assert {run.run, run.qrels} <= set(targets) and " " not in run.run_name and "/" not in run.run_name
        assert (run.part is None) == run.evaluation.startswith("retrieval/")
        assert re.fullmatch(patterns["evaluation"], run.evaluation) and re.fullmatch(patterns["ranking"], run.name)
        assert exports.propsegment_run(run.evaluation, run.name) == run
    assert PropsegmentRun("predicted/subencoder_x_full/seed13", "authors", "gold").run == \
        "exports/trec/subencoder/predicted/subencoder_x_full/seed13/gold_authors.run"
    with pytest.raises(KeyError):
        exports.propsegment_run("retrieval/nope", "authors")
    counts = {"smoke": 16, "demo": 30, "paper": 104}
    assert len(runs) == counts[name]


def test_propsegment_is_a_beir_folder_per_table1_protocol_where_the_scale_evaluates_it(scale):
    from multivec.interop.propsegment_beir import FOLDER
    from multivec.rules.interop import BEIR_PROPSEGMENT, BEIR_TASK
    from multivec.subencoder.tables.units import Layout

    _, config, exports = scale
    protocols = exports.propsegment_protocols()
    assert protocols == list(Layout.from_config(config["subencoder"]).protocols)
    assert {"authors", "own_sentence_excluded"} <= set(protocols)
    folders = [BEIR_PROPSEGMENT.format(protocol=p) for p in protocols]
    assert set(folders) <= set(exports.targets())
    assert all(f == BEIR_TASK.format(task=FOLDER.format(protocol=p)) for f, p in zip(folders, protocols))
    pattern = exports.propsegment_protocol_pattern()
    assert all(re.fullmatch(pattern, p) for p in protocols) and not re.fullmatch(pattern, "pi")
    exports = copy.copy(exports)
    exports.subencoder_rows = []  # a scale that evaluates no PropSegment retrieval: no folder, no job
    assert exports.propsegment_protocols() == [] and not re.fullmatch(exports.propsegment_protocol_pattern(), "authors")
    assert not [t for t in exports.targets() if t.startswith("exports/beir/propsegment_")]
