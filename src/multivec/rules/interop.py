"""The exports of the trained models and rankings (rules/interop.smk, target ``exports``; not part of ``all``):
which model folders of this config become sentence-transformers folders (``multivec.interop.export_model``), which
are skipped with the reason, and which ranking evaluations become TREC runs and qrels.

Exported, each at every seed the scale trains it at (the ``tables`` seeds, and the ``claims`` seeds where a claim
reads the model's table), to ``exports/models/<name>/``:

- ``nugget/<row>/seed<s>``: Table 2's trained rows (NUGGET zoo models, kind ``nugget``; TSDAE, kind ``tsdae``),
  with the run's MRR on PI and RR (``results/table2/<row>/seed<s>/{pi,rr}.json``) in the model card;
- ``distill/<run>/seed<s>``: the distilled students of results/distill_table (kind ``student``);
- ``subencoder/<backbone>_<variant>/seed<s>``: the SubEncoders of the retrieval tables (kind ``subencoder``:
  ``full``, ``d<dim>`` and ``pca<dim>``).

Skipped, decided from the config alone (nothing is loaded), so that no job fails on a refusal the library is known
to make (docs/interop.md): NUGGET and TSDAE models on an mBART encoder (paper scale), NUGGET models with the
sentence-boundary selector, SubEncoders on a T5 backbone (paper scale's ST5 and GTR). Paragraph Vector teachers
and untrained SubEncoders are never candidates (only trained students and SubEncoders are).

Every ranking evaluation Table 2 writes (``results/table2/<run>/<task>.rankings.jsonl``, both seed sets) becomes
``exports/trec/<run>/<task>.run`` and ``.qrels``, ties written pessimistically (the project's MRR). Every ranking
the sub-sentence encoder's retrieval tables read (Tables 1, 4, 5, 8: each row at the table seeds, and at the claim
seeds for a table a claim reads) becomes ``exports/trec/subencoder/<evaluation>/<ranking>.run`` and ``.qrels``
(``<evaluation>``: the evaluation's path under ``results/subencoder/`` without ``.json``, e.g.
``retrieval/subencoder_<backbone>_full/seed<s>``; ``<ranking>``: a protocol, ``sentence`` or ``document``, after
``gold_``/``predicted_`` for Table 8), ties in the project's candidate order (its P@1 and R@k;
``multivec.interop.propsegment_formats``). Each task
is written in BEIR's layout to ``exports/beir/<task>/``, and each run's two rankings become MTEB result files,
scored by MTEB on those tasks (``multivec.interop.mteb_tasks``): ``results/mteb/multivec__<row>/<revision>/``
(``MultivecPI.json``, ``MultivecRR.json``, ``model_meta.json``; the revision is ``<scale>`` for an untrained row
and ``<scale>-seed<s>`` for a trained one). Where the scale evaluates PropSegment retrieval, its retrieval set is
written in BEIR's layout once per Table 1 protocol (``subencoder.evaluation.protocols``), each proposition as its
tokens' text, to ``exports/beir/propsegment_<protocol>/`` (``multivec.interop.propsegment_beir``): an MTEB task
any sentence encoder runs on.

Nothing here imports a model library: the workflow imports this module while it parses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from multivec.rules.distill_students import DISTILL_STUDENT_MODEL, DistillStudents
from multivec.rules.distill_teachers import DistillTeachers
from multivec.rules.nugget_table2 import Table2Runs, parse_run
from multivec.rules.nugget_zoo import NuggetZoo
from multivec.rules.paths import TASKS
from multivec.rules.seed_sets import SeedSets
from multivec.subencoder.tables import units as _subenc_units

MODEL_EXPORT = "exports/models/{name}"
TREC_RUN = "exports/trec/{run}/{task}.run"
TREC_QRELS = "exports/trec/{run}/{task}.qrels"
MANIFEST = "exports/manifest.tsv"
BEIR_TASK = "exports/beir/{task}"
# PropSegment's retrieval set under one of Table 1's protocols (multivec.interop.propsegment_beir.FOLDER)
BEIR_PROPSEGMENT = "exports/beir/propsegment_{protocol}"
MTEB_RESULTS = "results/mteb/{model}/{revision}"
# MTEB's model type of a Table 2 row, by how the row scores (multivec.nugget.tables.table2_rows.SIMILARITY)
MTEB_MODEL_TYPES = {"maxsim_mean": "late-interaction", "cosine": "dense", "bm25": "sparse"}
TIES = "pessimistic"  # the project's MRR (multivec.interop.ranking_formats)
PROPSEGMENT_RUN = "exports/trec/subencoder/{evaluation}/{ranking}.run"
PROPSEGMENT_QRELS = "exports/trec/subencoder/{evaluation}/{ranking}.qrels"
PROPSEGMENT_RANKINGS = "results/subencoder/{evaluation}.rankings.jsonl"
PROPSEGMENT_TIES = "candidate_order"  # the project's P@1 and R@k (multivec.interop.propsegment_formats)
NEVER = "(?!)"  # a wildcard pattern that matches nothing (no export of that kind at this scale)

# The NUGGET encoders the library exports (multivec.interop.nugget_export): the demo's BERT-style ones.
EXPORTABLE_NUGGET_ARCHITECTURES = ("bert_decoder",)


@dataclass(frozen=True)
class ModelExport:
    """One trained model folder and the export that reads it."""

    name: str  # exports/models/<name>
    kind: str  # multivec.interop.export_model's kind
    folder: str  # the trained model folder
    inputs: tuple[str, ...]  # the training rule's files the export reads
    metrics: tuple[tuple[str, str], ...] = ()  # (task, evaluation JSON) shown in the model card

    @property
    def dest(self) -> str:
        return MODEL_EXPORT.format(name=self.name)


@dataclass(frozen=True)
class SkippedExport:
    """A model the scale trains that the library refuses to export, with the library's reason."""

    name: str
    kind: str
    folder: str
    reason: str


@dataclass(frozen=True)
class MtebExport:
    """One Table 2 run's rankings (PI and RR) as MTEB result files."""

    run: str  # results/table2/<run>
    model: str  # MTEB's model name as a path: multivec__<row>
    revision: str
    model_type: str  # MTEB_MODEL_TYPES

    @property
    def name(self) -> str:  # MTEB's model name
        return self.model.replace("__", "/", 1)

    @property
    def dest(self) -> str:
        return MTEB_RESULTS.format(model=self.model, revision=self.revision)


@dataclass(frozen=True)
class PropsegmentRun:
    """One ranking of one PropSegment retrieval evaluation as a TREC run and qrels."""

    evaluation: str  # results/subencoder/<evaluation>.json
    ranking: str  # the rankings JSONL's ranking: a protocol, sentence or document
    part: str | None = None  # Table 8: gold or predicted queries

    @property
    def name(self) -> str:  # the {ranking} of the exported files
        return f"{self.part}_{self.ranking}" if self.part else self.ranking

    @property
    def rankings(self) -> str:
        return PROPSEGMENT_RANKINGS.format(evaluation=self.evaluation)

    @property
    def json(self) -> str:
        return f"results/subencoder/{self.evaluation}.json"

    @property
    def run(self) -> str:
        return PROPSEGMENT_RUN.format(evaluation=self.evaluation, ranking=self.name)

    @property
    def qrels(self) -> str:
        return PROPSEGMENT_QRELS.format(evaluation=self.evaluation, ranking=self.name)

    @property
    def run_name(self) -> str:  # the run tag (one token)
        return f"propsegment_{self.evaluation}_{self.name}".replace("/", "_")


@dataclass
class ExportPlan:
    models: list[ModelExport] = field(default_factory=list)
    skipped: list[SkippedExport] = field(default_factory=list)

    def add(self, export: ModelExport, reason: str | None) -> None:
        if reason:
            self.skipped.append(SkippedExport(export.name, export.kind, export.folder, reason))
        else:
            self.models.append(export)


def nugget_refusal(settings: Mapping[str, Any], kind: str) -> str | None:
    """Why the library refuses a NUGGET/TSDAE model of these NuggetConfig fields (None: it exports)."""
    architecture = settings.get("architecture")
    if architecture not in EXPORTABLE_NUGGET_ARCHITECTURES:
        return (f"architecture {architecture!r} ({settings.get('encoder')}): only BERT-style encoders export; an "
                "mBART encoder would load as the whole seq2seq model in sentence-transformers' Transformer")
    if kind == "nugget" and settings.get("bottleneck") == "nuggets" and settings.get("selector") == "sentence_boundary":
        return "selector 'sentence_boundary' needs each text's sentence ends, which MultiVectorEncoder.encode cannot pass"
    return None


def is_t5(encoder: str) -> bool:
    """Whether an encoder name is a T5 model (sentence-t5, gtr-t5, t5-*, mt5-*): the name, not its files, since
    the workflow parses without loading anything."""
    return re.search(r"(?<![a-z0-9])m?t5(?![a-z0-9])", str(encoder).lower()) is not None


def subencoder_refusal(encoder: str) -> str | None:
    if is_t5(encoder):
        return (f"a T5 backbone ({encoder}): sentence-transformers would load the encoder-decoder, not the "
                "encoder stack")
    return None


def _seeds(seeds: SeedSets, seedsets: list[str]) -> list:
    return list(dict.fromkeys(s for seedset in seedsets for s in seeds.model_seeds(seedset)))


class Exports:
    """What the ``exports`` target writes for a config (``plan`` / ``models`` / ``skipped`` / ``trec_runs`` /
    ``propsegment_runs``)."""

    def __init__(self, config: Mapping[str, Any], seeds: SeedSets):
        self.config = config
        self.seeds = seeds
        self.zoo = NuggetZoo(config)
        self.table2 = Table2Runs(config, self.zoo, seeds)
        self.plan = ExportPlan()
        self.subencoder_rows = self._subencoder_rows()
        self._nugget()
        self._students()
        self._subencoders()
        self.by_name = {m.name: m for m in self.plan.models}

    # -- models
    def _nugget(self) -> None:
        """Table 2's trained rows at the seeds of the runs Table 2 evaluates (both seed sets)."""
        for run in dict.fromkeys(run for run, _task in self.trec_runs()):
            row, seed = parse_run(run)
            if seed is None:  # not a trained row (BM25, ColBART, token pooling, mean pooled)
                continue
            spec = self.zoo.rows[row]
            settings = self.zoo.zoo_model_config(spec["objective"], self.zoo.row_variant(spec), seed)
            files = self.zoo.model_files(row, seed)
            export = ModelExport(f"nugget/{row}/seed{seed}", spec["kind"], self.zoo.model_dir(row, seed),
                                 (files["weights"], files["config"]),
                                 tuple((task, f"results/table2/{run}/{task}.json") for task in TASKS))
            self.plan.add(export, nugget_refusal(settings, spec["kind"]))

    def _students(self) -> None:
        """The trained students of results/distill_table (both seed sets)."""
        students = DistillStudents(self.config, DistillTeachers(self.config), self.seeds)
        found = dict.fromkeys((entry["name"].removeprefix("student_"), entry["seed"])
                              for seedset in ("tables", "claims") for entry in students.distill_table_entries(seedset)
                              if entry["kind"] == "student")
        for run, seed in found:
            folder = DISTILL_STUDENT_MODEL.format(run=run, seed=seed)
            self.plan.add(ModelExport(f"distill/{run}/seed{seed}", "student", folder,
                                      (f"{folder}/model.safetensors", f"{folder}/config.json")), None)

    def _subencoder_rows(self) -> list[tuple[str, Any, Any]]:
        """(table, row source, seed) of every row of the retrieval tables this scale builds, each trained row at
        the table seeds and, for a table a claim reads, at the claim seeds; an untrained row once (seed None)."""
        subencoder = self.config["subencoder"]
        layout = _subenc_units.Layout.from_config(subencoder)
        tables = ["table1", "table4"] + (["table5"] if subencoder["model"].get("reduced_dim") else []) \
            + (["table8"] if subencoder["evaluation"].get("segmenter") else [])
        found = []
        for table in tables:
            claimed = bool(self.seeds.claimed_rows(_subenc_units.stat_table_name(table)))
            seeds = _seeds(self.seeds, ["tables", "claims"] if claimed else ["tables"])
            for source in _subenc_units.table_rows(table, layout):
                found += [(table, source, seed) for seed in (seeds if source.trained else [None])]
        return found

    def _subencoders(self) -> None:
        """The trained SubEncoders of the retrieval tables, at the table seeds and, for a table a claim reads, at
        the claim seeds."""
        subencoder = self.config["subencoder"]
        encoders = {b["name"]: b["encoder"] for b in subencoder["model"]["backbones"]}
        found: dict[tuple[str, str, Any], None] = {}
        for _table, source, seed in self.subencoder_rows:
            if source.trained:
                variant = source.variant if source.evaluation == "trained" else "full"
                found[(source.backbone, variant, seed)] = None
        for backbone, variant, seed in found:
            folder = f"models/subencoder/{backbone}_{variant}/seed{seed}"  # rules/subencoder.smk (train, pca)
            export = ModelExport(f"subencoder/{backbone}_{variant}/seed{seed}", "subencoder", folder,
                                 (f"{folder}/model.safetensors", f"{folder}/config.json"))
            self.plan.add(export, subencoder_refusal(encoders[backbone]))

    @property
    def models(self) -> list[ModelExport]:
        return self.plan.models

    @property
    def skipped(self) -> list[SkippedExport]:
        return self.plan.skipped

    def model(self, name: str) -> ModelExport:
        return self.by_name[name]

    def model_pattern(self) -> str:
        """The {name} wildcard of export_model: exactly the exportable models' names."""
        return "|".join(re.escape(m.name) for m in self.models) or NEVER

    # -- rankings
    def trec_runs(self) -> list[tuple[str, str]]:
        """(run, task) of every ranking evaluation Table 2 writes (both seed sets), each once."""
        found = dict.fromkeys((self.table2.row_run(row, seed), task) for seedset in ("tables", "claims")
                              for _file, row, seed, task in self.table2.table2_ranking_files(seedset))
        return list(found)

    def propsegment_runs(self) -> list[PropsegmentRun]:
        """Every ranking the PropSegment retrieval tables read (``multivec.subencoder.tables.units.row_rankings``),
        of every evaluation they read, each once."""
        found: dict[PropsegmentRun, None] = {}
        for table, source, seed in self.subencoder_rows:
            evaluation = _subenc_units.evaluation_path(source, seed).removeprefix("results/subencoder/")
            part = source.variant if source.evaluation == "predicted" else None
            for ranking in _subenc_units.row_rankings(table, source):
                found[PropsegmentRun(evaluation.removesuffix(".json"), ranking, part)] = None
        return list(found)

    def propsegment_run(self, evaluation: str, ranking: str) -> PropsegmentRun:
        return _find(self.propsegment_runs(), ("evaluation", "name"), (evaluation, ranking), "PropSegment run")

    def propsegment_patterns(self) -> dict[str, str]:
        """The {evaluation} and {ranking} wildcards of export_trec_propsegment."""
        runs = self.propsegment_runs()
        return {"evaluation": _alternation(r.evaluation for r in runs), "ranking": _alternation(r.name for r in runs)}

    # -- MTEB
    def mteb_exports(self) -> list[MtebExport]:
        """One MTEB export per Table 2 run that is evaluated on both tasks."""
        from multivec.nugget.tables.table2_rows import SIMILARITY

        tasks_of: dict[str, list[str]] = {}
        for run, task in self.trec_runs():
            tasks_of.setdefault(run, []).append(task)
        scale = str(self.config.get("scale", "demo"))
        exports = []
        for run, tasks in tasks_of.items():
            if sorted(tasks) != sorted(TASKS):
                continue
            row, seed = parse_run(run)
            kind = self.table2.rows[row]["kind"]
            exports.append(MtebExport(run, f"multivec__{row}", scale if seed is None else f"{scale}-seed{seed}",
                                      MTEB_MODEL_TYPES["bm25" if kind == "bm25" else SIMILARITY[kind]]))
        return exports

    def mteb_export(self, model: str, revision: str) -> MtebExport:
        return _find(self.mteb_exports(), ("model", "revision"), (model, revision), "MTEB export")

    def mteb_patterns(self) -> dict[str, str]:
        """The {model} and {revision} wildcards of export_mteb."""
        exports = self.mteb_exports()
        return {"model": _alternation(e.model for e in exports), "revision": _alternation(e.revision for e in exports)}

    # -- PropSegment as BEIR folders
    def propsegment_protocols(self) -> list[str]:
        """The protocols whose BEIR folder of PropSegment's retrieval set the target writes: Table 1's, where the
        scale evaluates PropSegment retrieval (none where it does not)."""
        if not self.subencoder_rows:
            return []
        return list(_subenc_units.Layout.from_config(self.config["subencoder"]).protocols)

    def propsegment_protocol_pattern(self) -> str:
        """The {protocol} wildcard of export_beir_propsegment."""
        return _alternation(self.propsegment_protocols())

    # -- the target
    def targets(self) -> list[str]:
        """Every file and folder the ``exports`` target gathers."""
        return [MANIFEST, *(m.dest for m in self.models),
                *(path.format(run=run, task=task) for run, task in self.trec_runs() for path in (TREC_RUN, TREC_QRELS)),
                *(path for run in self.propsegment_runs() for path in (run.run, run.qrels)),
                *(e.dest for e in self.mteb_exports()),
                *(BEIR_PROPSEGMENT.format(protocol=p) for p in self.propsegment_protocols())]

    def manifest_rows(self) -> list[dict[str, str]]:
        """One row per model the scale trains: exported (where to) or skipped (why)."""
        rows = [{"name": m.name, "kind": m.kind, "source": m.folder, "status": "exported", "export": m.dest,
                 "reason": ""} for m in self.models]
        rows += [{"name": s.name, "kind": s.kind, "source": s.folder, "status": "skipped", "export": "",
                  "reason": s.reason} for s in self.skipped]
        return rows


def _find(items, fields: tuple[str, ...], values: tuple[str, ...], what: str):
    """The item whose ``fields`` equal ``values`` (a wildcard's plan entry); KeyError naming it otherwise."""
    for item in items:
        if tuple(getattr(item, f) for f in fields) == values:
            return item
    raise KeyError(f"no {what} {'/'.join(values)}")


def _alternation(values) -> str:
    """A wildcard pattern matching exactly ``values`` (NEVER when there are none)."""
    return "|".join(sorted({re.escape(v) for v in values})) or NEVER


def trec_run_name(run: str, task: str) -> str:
    """The run tag of a TREC run file (one token): ``nugget_mt_r0.1/seed13`` on PI -> ``nugget_mt_r0.1_seed13_pi``."""
    return f"{run}_{task}".replace("/", "_")


# What a model card shows of a run's evaluation JSON (results/table2/<run>/<task>.json).
CARD_METRICS = ("mrr", "n_queries", "method", "vectors_per_doc")


def card_metrics(files: Mapping[str, str]) -> dict[str, Any]:
    """The metrics JSON a model card shows: ``{task: {mrr, n_queries, method, vectors_per_doc}}`` from each task's
    evaluation file (``files``: task -> path), and ``sources`` (the files; a list, which the card leaves out)."""
    import json

    metrics: dict[str, Any] = {}
    for task, path in files.items():
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        metrics[task] = {key: data[key] for key in CARD_METRICS if key in data}
    return {**metrics, "sources": [str(path) for path in files.values()]} if metrics else {}


def exportable_models(config: Mapping[str, Any], seeds: SeedSets) -> tuple[list[ModelExport], list[SkippedExport]]:
    """The models of ``config`` that the ``exports`` target exports, and those it skips with the reason."""
    exports = Exports(config, seeds)
    return exports.models, exports.skipped

