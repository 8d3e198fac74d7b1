"""The project's ranking tasks as MTEB tasks, and its rankings as MTEB results (mteb 2.x; docs/interop.md).

- ``reranking_task(folder, task)``: NUGGET §6.1's PI or RR task, read from its BEIR layout
  (``multivec.interop.ranking_formats.write_beir``: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/test.tsv`` and
  ``candidates.jsonl``), as an ``mteb`` retrieval task with ``top_ranked``: each query ranks its own 20
  candidates (a reranking task), not the whole corpus. ``mteb.evaluate(model, reranking_task(...))`` scores
  any sentence-transformers model on it (``SentenceTransformer`` or ``MultiVectorEncoder``).
  ``reranking_task(folder, "propsegment_<protocol>")`` is PropSegment's atomic-fact retrieval (Chen et al. 2023,
  §4.2.1) in the same layout (``multivec.interop.propsegment_beir``: each proposition as its tokens' text, each
  query's candidates under one protocol; ``PROPSEGMENT_TASKS``), main score P@1 (``precision_at_1``), with R@5
  among MTEB's scores (``recall_at_5``).
- ``RunScores``: a ranking this project computed (a TREC run, ``multivec.interop.ranking_formats``) as an
  ``mteb`` search model, so that ``write_mteb_results`` writes MTEB's result files (``<out>/<model>/<revision>/
  <Task>.json`` and ``model_meta.json``) with MTEB's own metrics, computed by MTEB from the project's scores.

Ties: MTEB orders tied scores by document id, descending (as trec_eval); the project ranks a candidate that
scores exactly as high as the answer above it (pessimistic). A run written with ``ties="pessimistic"`` carries
the project's order in strictly decreasing scores, so MTEB's MRR on it is the project's MRR exactly.

Length: the project's mean-pooled row encodes up to the encoder's 512 positions (``table2.max_tokens: null``);
all-MiniLM-L6-v2's sentence-transformers folder truncates at 256. Set ``model.max_seq_length`` to compare.

``mteb`` is imported only inside the functions (``pip install mteb``; the ``interop`` extra).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Mapping

# task key -> (MTEB task name, description). Names are MTEB's CamelCase; "Multivec" keeps them apart from MTEB's own.
RERANKING_TASKS = {
    "pi": ("MultivecPI", "Paraphrase identification as ranking (NUGGET, Qin & Van Durme 2023, §6.1.1): each "
                         "query document ranks 20 candidates, one of them its paraphrase."),
    "rr": ("MultivecRR", "Passage reranking (NUGGET, Qin & Van Durme 2023, §6.1.2): each query passage ranks 20 "
                         "candidates, one of them the passage that followed it."),
}
MAIN_SCORE = "mrr_at_1000"  # MRR over every candidate (20 per query): the project's MRR, on MTEB's 0-1 scale
# PropSegment's atomic-fact retrieval (Chen et al. 2023, §4.2.1) under each protocol, from its BEIR folder
# (multivec.interop.propsegment_beir; the key is the folder's name): task key -> (MTEB task name, description).
PROPSEGMENT_TASKS = {
    f"propsegment_{protocol}": (name, "Atomic-fact retrieval on PropSegment dev (sub-sentence encoder, Chen et al. "
                                      "2023, §4.2.1): each query proposition ranks the candidate propositions of "
                                      f"its cluster's documents, {removed}; each proposition is its tokens taken "
                                      "from its sentence (App. C.1, token subset only).")
    for protocol, name, removed in (
        ("authors", "MultivecPropSegment", "less the query itself (the authors' protocol)"),
        ("own_sentence_excluded", "MultivecPropSegmentOwnSentenceExcluded", "less every candidate of its sentence"),
        ("own_document_excluded", "MultivecPropSegmentOwnDocumentExcluded", "less every candidate of its document"))}
PROPSEGMENT_MAIN_SCORE = "precision_at_1"  # the project's P@1 on MTEB's 0-1 scale; MTEB also reports recall_at_5
MODEL_TYPES = ("dense", "late-interaction", "sparse")  # MTEB's names: one vector, several (MaxSim), BM25
BEIR_FILES = ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv", "candidates.jsonl")


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not JSON ({error.msg})") from None
    return rows


def read_beir(folder: str | os.PathLike) -> dict[str, Any]:
    """The BEIR layout of a reranking task as plain Python: ``corpus`` (``[{id, title, text}]``), ``queries``
    (``[{id, text}]``), ``relevant_docs`` (``{qid: {docid: 1}}``) and ``top_ranked`` (``{qid: [docid, ...]}``)."""
    folder = Path(folder)
    missing = [name for name in BEIR_FILES if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(f"{folder}: not a BEIR task folder of this project, missing {', '.join(missing)} "
                                "(written by multivec.interop.write_beir, target `exports`)")
    corpus = [{"id": str(r["_id"]), "title": r.get("title", ""), "text": r["text"]}
              for r in _read_jsonl(folder / "corpus.jsonl")]
    queries = [{"id": str(r["_id"]), "text": r["text"]} for r in _read_jsonl(folder / "queries.jsonl")]
    relevant: dict[str, dict[str, int]] = {}
    lines = (folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != 3:
            raise ValueError(f"{folder / 'qrels' / 'test.tsv'}:{number}: expected query-id, corpus-id, score")
        relevant.setdefault(fields[0], {})[fields[1]] = int(fields[2])
    top_ranked = {str(r["query-id"]): [str(c) for c in r["corpus-ids"]] for r in _read_jsonl(folder / "candidates.jsonl")}
    corpus_ids = {doc["id"] for doc in corpus}
    for qid, candidates in top_ranked.items():
        unknown = [c for c in candidates if c not in corpus_ids]
        if unknown:
            raise ValueError(f"{folder}: query {qid} lists candidates not in corpus.jsonl: {unknown[:3]}")
    query_ids = {q["id"] for q in queries}
    if set(relevant) != query_ids or set(top_ranked) != query_ids:
        raise ValueError(f"{folder}: queries.jsonl, qrels/test.tsv and candidates.jsonl list different queries")
    return {"corpus": corpus, "queries": queries, "relevant_docs": relevant, "top_ranked": top_ranked}


def folder_revision(folder: str | os.PathLike) -> str:
    """A short content hash of a BEIR task folder (the task's ``dataset.revision`` in MTEB's results)."""
    digest = hashlib.sha256()
    for name in BEIR_FILES:
        digest.update(name.encode())
        digest.update((Path(folder) / name).read_bytes())
    return digest.hexdigest()[:12]


def reranking_task(folder: str | os.PathLike, task: str):
    """An ``mteb`` task (an ``AbsTaskRetrieval`` with ``top_ranked``) of the task in ``folder``: PI or RR
    (``RERANKING_TASKS``; main score MRR), or PropSegment under a protocol (``PROPSEGMENT_TASKS``; main score
    P@1)."""
    from datasets import Dataset
    from mteb.abstasks.retrieval import AbsTaskRetrieval
    from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData
    from mteb.abstasks.task_metadata import TaskMetadata

    tasks = {**RERANKING_TASKS, **PROPSEGMENT_TASKS}
    if task not in tasks:
        raise ValueError(f"task {task!r}: expected one of {', '.join(tasks)}")
    folder = Path(folder)
    data = read_beir(folder)  # fail here, with the folder named, rather than inside mteb
    name, description = tasks[task]
    # MTEB ranks each query's top max(k_values) = 1,000 scores only; a PropSegment query has about 1,600
    # candidates. One more cutoff at the deepest list keeps every candidate, so the metrics at that cutoff
    # (mrr_at_<n>, ...) are over the whole list, as the project computes them; P@1 and R@5 do not change.
    deepest = max((len(candidates) for candidates in data["top_ranked"].values()), default=0)
    cutoffs = tuple(AbsTaskRetrieval.k_values) + ((deepest,) if deepest > max(AbsTaskRetrieval.k_values) else ())
    metadata = TaskMetadata(
        name=name, description=description, type="Retrieval", category="t2t",
        main_score=MAIN_SCORE if task in RERANKING_TASKS else PROPSEGMENT_MAIN_SCORE,
        dataset={"path": str(folder), "revision": folder_revision(folder)}, eval_splits=["test"],
        eval_langs=["eng-Latn"], modalities=["text"], reference=None,
        date=None, domains=None, task_subtypes=None, license=None, annotations_creators=None, dialect=None,
        sample_creation=None, bibtex_citation=None)

    class ProjectRerankingTask(AbsTaskRetrieval):
        k_values = cutoffs

        def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
            split = RetrievalSplitData(corpus=Dataset.from_list(data["corpus"]),
                                       queries=Dataset.from_list(data["queries"]),
                                       relevant_docs=data["relevant_docs"], top_ranked=data["top_ranked"])
            self.dataset = {"default": {"test": split}}
            self.data_loaded = True

    ProjectRerankingTask.metadata = metadata
    ProjectRerankingTask.__name__ = ProjectRerankingTask.__qualname__ = name
    return ProjectRerankingTask()


class RunScores:
    """A computed ranking as an ``mteb`` search model: ``search`` returns the run's scores of each query's
    candidates (``runs``: MTEB task name -> ``{qid: {docid: score}}``, e.g. ``ranking_formats.read_run``)."""

    def __init__(self, runs: Mapping[str, Mapping[str, Mapping[str, float]]], name: str, revision: str,
                 model_type: str = "dense"):
        from mteb.models.model_meta import ModelMeta

        if model_type not in MODEL_TYPES:
            raise ValueError(f"model_type {model_type!r}: expected one of {', '.join(MODEL_TYPES)}")
        self.runs = runs
        self._meta = ModelMeta.create_empty({"name": name, "revision": revision, "framework": ["PyTorch"],
                                             "model_type": [model_type]})

    @property
    def mteb_model_meta(self):
        return self._meta

    def index(self, corpus, **kwargs: Any) -> None:  # the scores are computed already
        return None

    def search(self, queries, *, task_metadata, top_ranked=None, **kwargs: Any) -> dict[str, dict[str, float]]:
        run = self.runs.get(task_metadata.name)
        if run is None:
            raise ValueError(f"no run given for task {task_metadata.name} (runs for: {', '.join(self.runs)})")
        out = {}
        for qid in queries["id"]:
            if qid not in run:
                raise ValueError(f"{task_metadata.name}: the run has no scores for query {qid}")
            scores = run[qid]
            if top_ranked is not None and set(scores) != set(top_ranked[qid]):
                raise ValueError(f"{task_metadata.name}: query {qid}: the run scores other documents than the "
                                 "task's candidates (a run of another task build?)")
            out[qid] = dict(scores)
        return out


def evaluate_into(model: Any, tasks: list, out_dir: str | os.PathLike, show_progress_bar: bool = False,
                  prediction_folder: str | os.PathLike | None = None) -> list[Path]:
    """``mteb.evaluate(model, tasks)``, with MTEB's result files moved to ``out_dir/<model>/<revision>/``
    (``<Task>.json`` each, ``model_meta.json``); returns the task files. Always recomputes (no cache reads).
    ``prediction_folder``: MTEB also writes each query's candidate scores there (``<Task>_predictions.json``)."""
    import mteb

    out_dir = Path(out_dir)
    with tempfile.TemporaryDirectory(prefix="mteb_cache_") as cache_dir:
        mteb.evaluate(model, tasks, cache=mteb.ResultCache(cache_path=cache_dir), overwrite_strategy="always",
                      show_progress_bar=show_progress_bar, prediction_folder=prediction_folder)
        results = Path(cache_dir) / "results"
        written = []
        for path in sorted(results.rglob("*")):
            if path.is_file():
                dest = out_dir / path.relative_to(results)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, dest)
                if path.name not in ("model_meta.json", "run_settings.jsonl"):
                    written.append(dest)
    return written


def write_mteb_results(runs: Mapping[str, str | os.PathLike], beir_folders: Mapping[str, str | os.PathLike],
                       out_dir: str | os.PathLike, name: str, revision: str, model_type: str = "dense") -> list[Path]:
    """MTEB result files of the project's rankings: ``runs`` (task key -> TREC run) scored by MTEB on the tasks
    in ``beir_folders`` (task key -> BEIR folder), written to ``out_dir/<name>/<revision>/`` (name's ``/`` as
    ``__``, MTEB's layout); ``model_type`` is MTEB's (``MODEL_TYPES``)."""
    from multivec.interop.ranking_formats import read_run

    if set(runs) != set(beir_folders):
        raise ValueError(f"runs for {sorted(runs)} but task folders for {sorted(beir_folders)}")
    tasks = [reranking_task(beir_folders[key], key) for key in runs]
    model = RunScores({RERANKING_TASKS[key][0]: read_run(path) for key, path in runs.items()}, name, revision,
                     model_type)
    return evaluate_into(model, tasks, out_dir)


def main_score(result_file: str | os.PathLike) -> float:
    """The main score (0-1: MRR for PI and RR, P@1 for PropSegment) of an MTEB result file of one of these tasks."""
    data = json.loads(Path(result_file).read_text(encoding="utf-8"))
    return float(data["scores"]["test"][0]["main_score"])
