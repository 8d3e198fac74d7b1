"""One Table 2 row (NUGGET §6.1): encode a task's documents with the row's model, rank the
candidates, and gather the row's numbers for ``multivec.evaluation.table2``.

Row kinds (config ``table2.rows``):
- ``nugget``: a trained NUGGET model; its nuggets, scored with MaxSim-mean (eq. 10);
- ``tsdae``: a trained TSDAE model (one mean-pooled vector); cosine;
- ``token_states``: ColBART — every last-layer token state of the untrained base encoder; MaxSim-mean;
- ``mean_pooled``: the untrained base sentence encoder, mean-pooled as sentence-transformers does; cosine;
- ``bm25``: BM25 with the query document as query; no vectors.
"""

from __future__ import annotations

import os
from typing import Any

from multivec.encodings import read_encodings
from multivec.evaluation.ranking_evaluation import RankingResult, evaluate_with_bm25, evaluate_with_encodings
from multivec.tasks.ranking_task import RankingTask

DISPLAY_NAMES = {"nugget": "NUGGET", "tsdae": "TSDAE", "token_states": "ColBART", "mean_pooled": "mean-pooled",
                 "bm25": "BM25"}
SIMILARITY = {"nugget": "maxsim_mean", "tsdae": "cosine", "token_states": "maxsim_mean", "mean_pooled": "cosine"}


def write_row_encodings(row: dict[str, Any], task: RankingTask, out_dir: str | os.PathLike, *,
                        base_encoder: str, model_dir: str | None, max_tokens: int, batch_size: int) -> None:
    """Encode every document the task uses with the row's encoder into an encodings artifact."""
    ids = task.used_document_ids()
    documents = {doc_id: task.documents[doc_id] for doc_id in ids}
    kind = row["kind"]
    if kind in ("nugget", "tsdae"):
        from multivec.nugget.encoding import write_nugget_encodings
        from multivec.nugget.modeling import NuggetModel

        if model_dir is None:
            raise ValueError(f"row {row['name']!r} ({kind}) needs a trained model folder")
        model = NuggetModel.from_pretrained(model_dir)
        write_nugget_encodings(out_dir, ids, [documents[i] for i in ids], model, batch_size=batch_size,
                               max_length=max_tokens, info={"row": row["name"], "model_dir": str(model_dir)})
    elif kind in ("token_states", "mean_pooled"):
        from multivec.baselines.base_encoder import write_baseline_encodings

        pooling = "tokens" if kind == "token_states" else "mean"
        write_baseline_encodings(base_encoder, documents, out_dir, pooling=pooling, max_length=max_tokens,
                                 batch_size=batch_size)
    else:
        raise ValueError(f"row {row['name']!r}: kind {kind!r} has no encoder")


def evaluate_row(row: dict[str, Any], task: RankingTask, encodings_dir: str | os.PathLike | None) -> RankingResult:
    """MRR×100 and per-query rankings of one row on one task."""
    if row["kind"] == "bm25":
        return evaluate_with_bm25(task)
    return evaluate_with_encodings(task, read_encodings(encodings_dir), SIMILARITY[row["kind"]])


def row_metrics(row: dict[str, Any], task_name: str, result: RankingResult,
                encodings_dir: str | os.PathLike | None) -> dict[str, Any]:
    """The ``results/table2/<row>/<task>.json`` record."""
    metrics = {"row": row["name"], "task": task_name, **result.summary()}
    if encodings_dir is not None:
        encodings = read_encodings(encodings_dir)
        metrics["vectors_per_doc"] = sum(len(v) for v in encodings.vectors) / len(encodings.vectors)
    return metrics


def table2_record(row: dict[str, Any], metrics: dict[str, dict[str, Any]],
                  training: dict[str, Any] | None) -> dict[str, Any]:
    """One input row of ``assemble_table2`` from the row's config, its per-task metrics and training summary."""
    kind = row["kind"]
    vectors = [m["vectors_per_doc"] for m in metrics.values() if "vectors_per_doc" in m]
    record = {
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
        "train_minutes": training["train_minutes"] if training else None,
    }
    return record
