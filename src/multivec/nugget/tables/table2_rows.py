"""One Table 2 row (NUGGET §6.1): encode a task's documents with the row's model, rank the
candidates, and gather the row's numbers for ``multivec.nugget.tables.table2``.

Row kinds (config ``table2.rows``):
- ``nugget``: a trained NUGGET model; its nuggets, scored with MaxSim-mean (eq. 10);
- ``tsdae``: a trained TSDAE model (one mean-pooled vector); cosine;
- ``token_states``: ColBART — every last-layer token state of the untrained base encoder; MaxSim-mean;
- ``mean_pooled``: the untrained base sentence encoder, mean-pooled as sentence-transformers does; cosine.
  Both read the same base-encoder token states (``encoding_folders.BASE_ENCODINGS``): the mean is taken at scoring time,
  so the base encoder runs once per task;
- ``token_pooling``: the base encoder's token states pooled by Ward clustering to NUGGET's k = ceil(n·r)
  vectors per document at the row's ``ratio`` (Clavié et al. 2024, PyLate's ``pool_factor``;
  ``multivec.baselines.token_pooling``); MaxSim-mean over the same candidates as the NUGGET rows. The
  pooled vectors are an encodings folder of their own (rules/token_pooling.smk), made from the shared
  base-encoder states once per task for every ratio;
- ``bm25``: BM25 with the query document as query; no vectors.
"""

from __future__ import annotations

import os
from typing import Any

from multivec.encodings import Encodings, read_encodings
from multivec.io.resources import default_device
from multivec.evaluation.ranking_evaluation import RankingResult, evaluate_with_bm25, evaluate_with_encodings
from multivec.tasks.ranking_task import RankingTask

DISPLAY_NAMES = {"nugget": "NUGGET", "tsdae": "TSDAE", "token_states": "ColBART", "mean_pooled": "mean-pooled",
                 "token_pooling": "Token pooling", "bm25": "BM25"}
SIMILARITY = {"nugget": "maxsim_mean", "tsdae": "cosine", "token_states": "maxsim_mean", "mean_pooled": "cosine",
              "token_pooling": "maxsim_mean"}


def write_token_pooling_encodings(base_dir: str | os.PathLike, out_dirs: dict[float, str | os.PathLike]) -> dict:
    """Pool the base encoder's token states of ``base_dir`` to k = ceil(n·r) vectors per document for every
    ratio r of ``out_dirs`` (one Ward tree per document serves them all) and write each as an encodings
    folder; returns ``{ratio: mean vectors per document}``."""
    from multivec.baselines.token_pooling import pool_documents_at
    from multivec.encodings import write_encodings

    base = read_encodings(base_dir)
    pooled = pool_documents_at(base.vectors, list(out_dirs))
    means = {}
    inherited = {k: v for k, v in base.info.items()  # what encoded the states; the counts are the pooled ones
                 if k not in ("n_documents", "dimension", "dtype_on_disk", "total_vectors")}
    for ratio, out_dir in out_dirs.items():
        write_encodings(out_dir, base.ids, pooled[ratio],
                        info={**inherited, "pooling": "token_pooling", "ratio": ratio, "base_encodings": str(base_dir),
                              "method": "Ward over cosine-distance rows, k = ceil(n*r) (Clavié et al. 2024)"})
        means[ratio] = sum(len(v) for v in pooled[ratio]) / max(len(pooled[ratio]), 1)
    return means


def write_task_encodings(task: RankingTask, out_dir: str | os.PathLike, *, model_dir: str | None,
                         base_encoder: str, max_tokens: int | None, batch_size: int, bf16: bool = False,
                         frozen_bottom: str | os.PathLike | None = None) -> None:
    """Encode every document the task uses (``write_document_encodings``). ``frozen_bottom``: the task's shared
    frozen-bottom states (NUGGET models only run their top)."""
    ids = task.used_document_ids()
    write_document_encodings(ids, [task.documents[doc_id] for doc_id in ids], out_dir, model_dir=model_dir,
                             base_encoder=base_encoder, max_tokens=max_tokens, batch_size=batch_size, bf16=bf16,
                             frozen_bottom=frozen_bottom)


def write_document_encodings(ids: list[str], texts: list[str], out_dir: str | os.PathLike, *, model_dir: str | None,
                             base_encoder: str, max_tokens: int | None, batch_size: int, bf16: bool = False,
                             frozen_bottom: str | os.PathLike | None = None) -> None:
    """Encode documents with a trained NUGGET/TSDAE model (``model_dir``), or else into the base encoder's token
    states. ``max_tokens`` None: whole documents up to the encoder's limit. ``frozen_bottom``: shared
    frozen-bottom states of these documents (NUGGET models only run their top; None: the whole model runs,
    which gives the same vectors)."""
    if model_dir is not None:
        from multivec.nugget.encoding import write_nugget_encodings
        from multivec.nugget.frozen_bottom import read_bottom_states
        from multivec.nugget.modeling import NuggetModel

        model = NuggetModel.from_pretrained(model_dir, device=default_device())
        bottom = read_bottom_states(frozen_bottom) if frozen_bottom is not None else None
        write_nugget_encodings(out_dir, ids, texts, model, batch_size=batch_size, max_tokens=max_tokens,
                               info={"model_dir": str(model_dir)}, bf16=bf16, bottom=bottom)
    else:
        from multivec.baselines.base_encoder import write_baseline_encodings

        write_baseline_encodings(base_encoder, dict(zip(ids, texts)), out_dir, pooling="tokens",
                                 max_length=max_tokens, batch_size=batch_size, bf16=bf16)


def row_encodings(row: dict[str, Any], encodings_dir: str | os.PathLike) -> Encodings:
    """The vectors a row scores with: its own, or for ``mean_pooled`` the mean of the base token states."""
    encodings = read_encodings(encodings_dir)
    if row["kind"] == "mean_pooled":
        # Mean over every token state, specials included, as sentence-transformers' mean pooling.
        encodings.vectors = [v.mean(axis=0, keepdims=True) for v in encodings.vectors]
    return encodings


def evaluate_row(row: dict[str, Any], task: RankingTask,
                 encodings: Encodings | str | os.PathLike | None) -> RankingResult:
    """MRR×100 and per-query rankings of one row on one task (``encodings``: ``row_encodings`` or its folder)."""
    if row["kind"] == "bm25":
        return evaluate_with_bm25(task)
    if not isinstance(encodings, Encodings):
        encodings = row_encodings(row, encodings)
    return evaluate_with_encodings(task, encodings, SIMILARITY[row["kind"]])


def row_metrics(row: dict[str, Any], task_name: str, result: RankingResult,
                encodings: Encodings | str | os.PathLike | None, seed: int | None = None) -> dict[str, Any]:
    """The ``results/table2/<row>[/seed<seed>]/<task>.json`` record (``encodings``: ``row_encodings`` or its
    folder; ``seed``: the trained model's training seed, None for untrained rows)."""
    metrics = {"row": row["name"], "task": task_name, "seed": seed, **result.summary()}
    if encodings is not None:
        if not isinstance(encodings, Encodings):
            encodings = row_encodings(row, encodings)
        metrics["vectors_per_doc"] = sum(len(v) for v in encodings.vectors) / len(encodings.vectors)
        if "truncation" in encodings.info:  # what the encoder's input length cut (multivec.encodings)
            metrics["truncation"] = encodings.info["truncation"]
    return metrics


def table2_record(row: dict[str, Any], metrics: dict[str, dict[str, Any]],
                  training: dict[str, Any] | None) -> dict[str, Any]:
    """One input row of ``assemble_table2`` from the row's config, its per-task metrics and training summary."""
    kind = row["kind"]
    vectors = [m["vectors_per_doc"] for m in metrics.values() if "vectors_per_doc" in m]
    record = {
        "row": row["name"],
        "model": DISPLAY_NAMES[kind],
        "objective": row["objective"].upper() if row.get("objective") else None,
        "ratio": row.get("ratio"),
        "multi_vector": SIMILARITY.get(kind) == "maxsim_mean",
        "PI": metrics["pi"]["mrr"],
        "RR": metrics["rr"]["mrr"],
        "vectors_per_doc": sum(vectors) / len(vectors) if vectors else None,
        "n_queries_PI": metrics["pi"]["n_queries"],
        "n_queries_RR": metrics["rr"]["n_queries"],
        "train_steps": training["train_steps"] if training else None,
    }
    return record


# Table 2's rows on the document tasks (``multivec.evaluation.document_tasks``): what the representation matrix
# reads beside their PI and RR scores. The metric names are the distillation table's, so the columns line up.
DOCUMENT_TASK_ROW_KINDS = ("nugget", "tsdae", "token_states", "mean_pooled", "token_pooling")  # BM25 has no vectors


def document_task_measurements(entries) -> list:
    """Per-unit ``Measurement``\\ s of Table 2 rows on the document tasks; ``entries``: ``(encodings folder, row
    (a ``table2.rows`` entry), seed or None, task, gold folder)``. A multi-vector row (MaxSim-mean in Table 2)
    compares Lee documents by symmetric MaxSim-mean and classifies polarity on its mean vector; a single-vector
    row by cosine and on its vector (``document_tasks`` module docstring)."""
    from multivec.evaluation.document_tasks import representation_units
    from multivec.statistics import Measurement

    out = []
    for folder, row, seed, task, gold in entries:
        if row["kind"] not in DOCUMENT_TASK_ROW_KINDS:
            raise ValueError(f"row {row['name']!r} ({row['kind']}) has no vectors to score on {task}")
        encodings = row_encodings(row, folder)
        scores = representation_units(task, encodings.by_id(), SIMILARITY[row["kind"]] == "maxsim_mean", gold)
        out += [Measurement(row["name"], metric, s.statistic, s.units, s.values, None if seed is None else int(seed))
                for metric, s in scores.items()]
    return out
