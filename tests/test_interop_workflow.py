"""The `exports` target (rules/interop.smk) on the built smoke DAG: every exported folder loads in
sentence-transformers, the NUGGET, TSDAE and student exports give the project's vectors, and the TREC files give
Table 2's MRR and the PropSegment retrieval's P@1 and R@5 with pytrec_eval, and the MTEB result files give the MRR
with MTEB. The plan itself (what is exported or skipped) is tests/test_rules_interop.py; a dry run of `exports` at
demo scale lists PropSegment's BEIR folders."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

TOLERANCE = 1e-5
TEXTS = ["the cat sat on the mat , and the dog ran . " * k for k in (1, 3, 20)] + ["short", "a b c d e f g"]
LOADERS = {"nugget": "MultiVectorEncoder", "tsdae": "SentenceTransformer", "student": "SentenceTransformer",
           "subencoder": "SentenceTransformer"}


def manifest(work: Path) -> list[dict[str, str]]:
    with open(work / "exports" / "manifest.tsv", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def load_export(folder: Path, kind: str):
    import sentence_transformers

    return getattr(sentence_transformers, LOADERS[kind])(str(folder), device="cpu", trust_remote_code=True)


def max_difference(work: Path, row: dict[str, str]) -> float:
    """Max abs difference between the export's vectors and the project's own, on TEXTS."""
    source, folder, kind = work / row["source"], work / row["export"], row["kind"]
    model = load_export(folder, kind)
    if kind in ("nugget", "tsdae"):
        from multivec.nugget.encoding import encode_documents
        from multivec.nugget.modeling import NuggetModel

        documents = encode_documents(NuggetModel.from_pretrained(source), TEXTS, batch_size=2)
        if kind == "tsdae":
            pairs = [(model.encode(TEXTS, batch_size=2), np.stack([d.vectors[0] for d in documents]))]
        else:
            pairs = list(zip(model.encode_document(TEXTS, batch_size=2, convert_to_numpy=True),
                             [d.vectors for d in documents]))
    elif kind == "student":
        from multivec.distill.student import embed_texts
        from multivec.distill.training import load_trained

        pairs = [(model.encode(TEXTS, batch_size=2), embed_texts(load_trained(source).student, TEXTS, batch_size=2))]
    else:
        raise ValueError(kind)
    diff = 0.0
    for got, expected in pairs:
        got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
        assert got.shape == expected.shape, (row["name"], got.shape, expected.shape)
        diff = max(diff, float(np.abs(got - expected).max()) if got.size else 0.0)
    return diff


def trec_mrr(run_path: Path, qrels_path: Path) -> float:
    import pytrec_eval

    from multivec.interop.ranking_formats import read_qrels, read_run

    per_query = pytrec_eval.RelevanceEvaluator(read_qrels(qrels_path), {"recip_rank"}).evaluate(read_run(run_path))
    return 100.0 * float(np.mean([m["recip_rank"] for m in per_query.values()]))


def check_propsegment_runs(work: Path) -> dict[str, tuple[float, float, float, float]]:
    """Each PropSegment TREC run present gives its evaluation's P@1 and R@5 with pytrec_eval: query by query equal
    floats, and the means; returns {run: (P_1, recall_5, project P@1, project R@5)}, ×100."""
    import pytrec_eval

    from multivec.interop.propsegment_formats import trec_id
    from multivec.interop.ranking_formats import read_qrels, read_run

    measured = {}
    root = work / "exports" / "trec" / "subencoder"
    for run_path in sorted(root.rglob("*.run")):
        evaluation = json.loads((work / "results" / "subencoder" / run_path.parent.relative_to(root))
                                .with_suffix(".json").read_text())
        part, _, ranking = run_path.stem.partition("_") if run_path.stem.startswith(("gold_", "predicted_")) \
            else (None, None, run_path.stem)
        result = evaluation[part] if part else evaluation
        per_query = result["per_query"]
        values = per_query["protocols"][ranking] if ranking in per_query["protocols"] else per_query[ranking]
        summary = result["protocols"][ranking] if ranking in result["protocols"] else result[ranking]
        qrels = read_qrels(run_path.with_suffix(".qrels"))
        trec = pytrec_eval.RelevanceEvaluator(qrels, {"P_1", "recall_5"}).evaluate(read_run(run_path))
        assert list(qrels) == [trec_id(unit) for unit in per_query["units"]], run_path
        for number, unit in enumerate(per_query["units"]):
            got = trec.get(trec_id(unit), {"P_1": 0.0, "recall_5": 0.0})  # no run line: the project's 0 too
            assert (100 * got["P_1"], 100 * got["recall_5"]) == (values["p@1"][number], values["r@5"][number]), unit
        means = tuple(float(np.mean([100 * trec.get(q, {}).get(m, 0.0) for q in qrels])) for m in ("P_1", "recall_5"))
        assert means == pytest.approx((summary["p@1"], summary["r@5"]), abs=1e-9), (run_path, means, summary)
        measured[str(run_path.relative_to(work))] = (*means, summary["p@1"], summary["r@5"])
    return measured


def check_exports(work: Path) -> dict[str, object]:
    """Every check of the test on a workflow folder where exports ran (all of `exports`, or the manifest and some
    folders and runs: those present are checked); returns what it measured."""
    rows = manifest(work)
    planned = [r for r in rows if r["status"] == "exported"]
    assert planned and not [r for r in rows if r["status"] == "skipped"]  # smoke: tiny BERTs only
    assert {r["kind"] for r in planned} == set(LOADERS)
    exported = [r for r in planned if (work / r["export"]).is_dir()]
    assert {r["kind"] for r in exported} == set(LOADERS)
    for row in exported:  # every folder loads with the library's own loaders
        assert load_export(work / row["export"], row["kind"]) is not None, row["name"]
        card = (work / row["export"] / "README.md").read_text(encoding="utf-8")
        if row["kind"] in ("nugget", "tsdae"):
            metrics = json.loads((work / "exports" / "metrics" / f"{row['name']}.json").read_text())
            assert f"{metrics['pi']['mrr']:.4f}" in card, row["name"]  # the run's MRR in the model card
    differences = {}
    for kind in ("nugget", "tsdae", "student"):
        row = next(r for r in exported if r["kind"] == kind)
        differences[row["name"]] = max_difference(work, row)
        assert differences[row["name"]] <= TOLERANCE, (row["name"], differences[row["name"]])
    runs = sorted(path for path in (work / "exports" / "trec").rglob("*.run")
                  if "subencoder" not in path.relative_to(work / "exports" / "trec").parts[:1])  # Table 2's
    assert runs
    mrrs = {}
    for run_path in runs:
        evaluation = json.loads((work / "results" / "table2" / run_path.relative_to(work / "exports" / "trec")
                                 .with_suffix(".json")).read_text())
        trec = trec_mrr(run_path, run_path.with_suffix(".qrels"))
        assert trec == pytest.approx(evaluation["mrr"], abs=1e-9), (run_path, trec, evaluation["mrr"])
        mrrs[str(run_path.relative_to(work))] = (trec, evaluation["mrr"])
    mteb_checked = check_mteb_results(work)
    return {"models": len(exported), "max_abs_difference": differences, "trec_runs": len(runs), "mrr": mrrs,
            "mteb_results": mteb_checked, "propsegment": check_propsegment_runs(work)}


def check_mteb_results(work: Path) -> int:
    """Each MTEB result file the DAG wrote gives Table 2's MRR of its run (MTEB rounds to 6 decimals on 0-1)."""
    from multivec.interop.mteb_tasks import RERANKING_TASKS, main_score
    from multivec.rules.interop import Exports
    from rules_configs import scale_config, seed_sets

    config = scale_config("smoke")
    checked = 0
    for export in Exports(config, seed_sets(config)).mteb_exports():
        folder = work / export.dest
        if not folder.is_dir():
            continue
        meta = json.loads((folder / "model_meta.json").read_text())
        assert (meta["name"], meta["revision"]) == (export.name, export.revision)
        for task, (task_name, _) in RERANKING_TASKS.items():
            evaluation = json.loads((work / "results" / "table2" / export.run / f"{task}.json").read_text())
            assert 100 * main_score(folder / f"{task_name}.json") == pytest.approx(evaluation["mrr"], abs=1e-4)
            checked += 1
    return checked


@pytest.mark.e2e
def test_exports_load_in_sentence_transformers_and_reproduce_table2s_mrr(copy_of_smoke_all, tmp_path):
    pytest.importorskip("pytrec_eval")
    from rules_configs import scale_config, seed_sets

    from multivec.rules.interop import Exports

    work = copy_of_smoke_all(tmp_path / "wf")
    # The manifest, one model of each kind, one run's TREC files and two PropSegment runs (a SubEncoder's under the
    # authors' protocol, Table 8's predicted queries): every rule and kind, in about a minute (the whole target,
    # 14 models, 28 runs and 16 PropSegment runs at smoke scale, would add minutes to the suite; the plan of all of
    # them is tests/test_rules_interop.py's).
    config = scale_config("smoke")
    plan = Exports(config, seed_sets(config))
    one_per_kind = {m.kind: m.dest for m in reversed(plan.models)}
    run, _ = plan.trec_runs()[0]
    mteb_export = next(e for e in plan.mteb_exports() if e.run == run)
    propsegment = [next(r for r in plan.propsegment_runs() if r.evaluation.startswith("retrieval/subencoder_")
                        and r.name == "authors"),
                   next(r for r in plan.propsegment_runs() if r.name == "predicted_authors")]
    targets = ["exports/manifest.tsv", *one_per_kind.values(), f"exports/trec/{run}/pi.run", f"exports/trec/{run}/rr.run",
               mteb_export.dest, *(r.run for r in propsegment)]
    result = subprocess.run([str(Path(sys.executable).parent / "snakemake"), *targets, "--configfile",
                             "config/smoke.yaml", "--cores", "2"], cwd=work, env=dict(os.environ, HF_HUB_OFFLINE="1"),
                            capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-5000:]
    # only the exports ran: `all` had built every model and ranking they read
    ran = {line.split()[-1].rstrip(":") for line in (result.stdout + result.stderr).splitlines() if line.lstrip().startswith(
        ("rule ", "localrule "))}
    assert ran <= {"export_model", "export_trec", "export_trec_propsegment", "export_manifest", "export_beir",
                   "export_mteb", "exports"}, ran
    measured = check_exports(work)
    assert measured["mteb_results"] == 2
    assert sorted(measured["propsegment"]) == sorted(r.run for r in propsegment)
    print(json.dumps({k: v for k, v in measured.items() if k != "mrr"}, indent=1))


def test_the_exports_dry_run_at_demo_scale_writes_propsegment_as_beir_folders(mirror, tmp_path):
    """`snakemake -n exports` at demo scale in an empty folder (every job listed, about 20 s): one
    export_beir_propsegment job per Table 1 protocol, reading PropSegment's dev files."""
    repo = Path(__file__).resolve().parents[1]
    result = subprocess.run([str(Path(sys.executable).parent / "snakemake"), "-n", "exports", "--directory",
                             str(tmp_path)], cwd=repo, env=dict(os.environ, HF_HUB_OFFLINE="1"), capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    jobs = re.findall(r"^rule export_beir_propsegment:\n((?:    .*\n)+)", result.stdout, flags=re.M)
    outputs = sorted(re.search(r"^    output: (.*)$", job, flags=re.M).group(1) for job in jobs)
    assert outputs == ["exports/beir/propsegment_authors", "exports/beir/propsegment_own_sentence_excluded"]
    assert all("data/raw/propsegment/v1/relationships.dev.json" in job for job in jobs)
